"""The support stage: after any strategy, which passages it read support which sentence of its
answer. One place for every strategy; the answer then cites only what supports it.

Layers: `lexical` (always computed, the default: new content words found in the passage),
`checker` (a trained MiniLM cross-encoder, `ragteam train support`; the lexical layer decides
when its file cannot load), `llm` (a model as the judge, `ragteam.agents.judge`: the answer's own
model or `--role-model judge=...`; a pair whose verdict fails keeps its lexical verdict), `off`
(nothing checked). The layer that decided, and why another
did not, is recorded in the trace as a `support` step."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ragteam.errors import InputError, ParseError, RagteamError
from ragteam.support.lexical import LEXICAL_THRESHOLD, lexical_score, sentences
from ragteam.trace import Step, Trace
from ragteam.types import Passage, SentenceSupport, Support, SupportSettings

LAYERS: tuple[str, ...] = ("lexical", "checker", "llm", "off")
# (sentence, passage text) -> whether the passage states the sentence; raises RagteamError
Judge = Callable[[str, str], bool]


def support_settings(
    layer: str = "lexical", abstain: bool = False, checker_path: str = ""
) -> SupportSettings:
    """Settings from a layer's name (as the CLI and the HTTP API take it); an unknown name
    raises InputError naming the known ones."""
    if layer not in LAYERS:
        raise InputError(f"unknown support layer {layer!r}: use one of {', '.join(LAYERS)}")
    return SupportSettings(layer, checker_path, abstain)  # type: ignore[arg-type]


MAX_SENTENCES = 50  # checked one by one; the rest of a longer answer counts as unchecked
CHECKED_PER_SENTENCE = 3  # passages the checker reads per sentence (the lexically closest)
MAX_CITED = 2  # supporting passages cited per sentence
JUDGED = 0.5  # the llm layer's scores are 1 (the judge backs the pair) or 0: its threshold


def check_support(
    question: str,
    answer: str,
    passages: list[Passage],
    settings: SupportSettings,
    trace: Trace | None = None,
    judge: Judge | None = None,
) -> Support:
    """Which of `passages` support each sentence of `answer` (to `question`); `judge` plays
    the `llm` layer (without one, the lexical layer decides and the trace says so)."""
    started = time.perf_counter()
    checker, note = _checker(settings)
    spans = sentences(answer)
    if len(spans) > MAX_SENTENCES:
        note = f"{note}; " if note else ""
        note += f"only the first {MAX_SENTENCES} of {len(spans)} sentences were checked"
        spans = spans[:MAX_SENTENCES]
    texts = [answer[a:b] for a, b in spans]
    usable = [p for p in passages if p.text.strip()]
    lexical = [[lexical_score(question, t, _passage_text(p)) for p in usable] for t in texts]
    if settings.layer == "off":
        result = Support("off", 1.0, read=tuple(p.id for p in usable), note="not checked")
    elif settings.layer == "llm" and judge is not None:
        scores, failed = _judged_scores(judge, texts, usable, lexical)
        if failed:
            note = f"{note}; " if note else ""
            note += f"the judge gave no verdict on {failed}: the lexical verdict stands for them"
        result = _decide("llm", JUDGED, spans, texts, usable, scores, note)
    elif checker is None:
        if settings.layer == "llm":
            note = "no model to judge with: the lexical layer alone"
        result = _decide("lexical", LEXICAL_THRESHOLD, spans, texts, usable, lexical, note)
    else:
        scores = _checker_scores(checker, question, texts, usable, lexical)
        result = _decide("checker", checker.threshold, spans, texts, usable, scores, note)
        result = replace(result, extra={"checker": checker.identity})
    if trace is not None:
        trace.add(_step(result, question, lexical, time.perf_counter() - started))
    return result


def _checker(settings: SupportSettings) -> tuple[Any, str]:
    """The checker, or None with the reason the lexical layer decides instead."""
    if settings.layer != "checker":
        return None, ""
    from pathlib import Path

    from ragteam.support.checker import load_checker

    try:
        return load_checker(Path(settings.checker_path) if settings.checker_path else None), ""
    except (RagteamError, ImportError, OSError) as exc:
        return None, f"the trained checker is unavailable ({exc}): the lexical layer alone"


def _passage_text(p: Passage) -> str:
    return f"{p.title}. {p.text}" if p.title else p.text


def _checker_scores(
    checker: Any,
    question: str,
    texts: list[str],
    usable: list[Passage],
    lexical: list[list[float]],
) -> list[list[float]]:
    """Checker probabilities; a pair the checker does not read (beyond the lexically closest
    CHECKED_PER_SENTENCE passages of its sentence) scores 0."""
    from ragteam.support.checker import claim_text

    pairs = _closest(lexical)
    probs = checker.scores(
        [claim_text(question, texts[i]) for i, _ in pairs],
        [_passage_text(usable[j]) for _, j in pairs],
    )
    scores = [[0.0] * len(usable) for _ in texts]
    for (i, j), prob in zip(pairs, probs, strict=True):
        scores[i][j] = prob
    return scores


def _closest(lexical: list[list[float]]) -> list[tuple[int, int]]:
    """(sentence, passage) pairs worth a closer look: each sentence's CHECKED_PER_SENTENCE
    lexically closest passages."""
    pairs: list[tuple[int, int]] = []
    for i, row in enumerate(lexical):
        order = sorted(range(len(row)), key=lambda j: -row[j])
        pairs += [(i, j) for j in order[:CHECKED_PER_SENTENCE]]
    return pairs


def _judged_scores(
    judge: Judge, texts: list[str], usable: list[Passage], lexical: list[list[float]]
) -> tuple[list[list[float]], str]:
    """1 where the judge says the passage states the sentence, else 0; a pair it gives no
    verdict on keeps the lexical verdict (1 at or above LEXICAL_THRESHOLD), and after a failure
    that is not a bad reply (an unreachable server) the judge is not asked again. Returns the
    scores and which pairs failed, in words ("" when none did)."""
    scores = [[0.0] * len(usable) for _ in texts]
    failed, broken = 0, ""
    for i, j in _closest(lexical):
        if not broken:
            try:
                scores[i][j] = float(judge(texts[i], _passage_text(usable[j])))
                continue
            except ParseError:
                failed += 1
            except RagteamError as exc:
                broken = str(exc)
        scores[i][j] = float(lexical[i][j] >= LEXICAL_THRESHOLD)
    parts = []
    if failed:
        parts.append(f"{failed} pair{'' if failed == 1 else 's'} (a reply that was no verdict)")
    if broken:
        parts.append(f"every pair from the model's failure on ({broken})")
    return scores, "; ".join(parts)


def _decide(
    layer: str,
    threshold: float,
    spans: list[tuple[int, int]],
    texts: list[str],
    usable: list[Passage],
    scores: list[list[float]],
    note: str,
) -> Support:
    out = []
    for (start, end), text, row in zip(spans, texts, scores, strict=True):
        ranked = sorted(range(len(row)), key=lambda j: -row[j])
        good = [usable[j].id for j in ranked if row[j] >= threshold][:MAX_CITED]
        best = row[ranked[0]] if ranked else 0.0
        out.append(SentenceSupport(text, start, end, best, tuple(good), bool(good)))
    return Support(layer, threshold, tuple(out), tuple(p.id for p in usable), note)


def _step(result: Support, question: str, lexical: list[list[float]], seconds: float) -> Step:
    return Step(
        kind="support",
        role="checker",
        input={
            "question": question,
            "sentences": [s.text for s in result.sentences],
            "passages": list(result.read),
            "layer": result.layer,
        },
        output={
            **result.to_dict(),
            "lexical": [[round(x, 3) for x in row] for row in lexical],
            **result.extra,
        },
        seconds=seconds,
        meta={"note": result.note} if result.note else {},
    )
