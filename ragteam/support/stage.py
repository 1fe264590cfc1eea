"""The support stage: after any strategy, which passages it read support which sentence of its
answer. One place for every strategy; the answer then cites only what supports it.

The layer that scores the pairs comes from the registry (`ragteam.support.layers`): `lexical`
(always computed: new content words found in the passage), `reader` (the span reader: does a
reading of the passage give what the sentence says), `checker` (a trained MiniLM
cross-encoder), `llm` (a model as the judge), or `off` (nothing checked). The layer that
decided, and why another did not, is recorded in the trace as a `support` step."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from ragteam.common.text import sentences
from ragteam.errors import InputError
from ragteam.support.layers import (
    OFF,
    SUPPORT_LAYERS,
    Judge,
    Pairs,
    Scored,
    layer_names,
    passage_text,
)
from ragteam.support.lexical import lexical_score
from ragteam.trace import Step, Trace
from ragteam.types import (
    DEFAULT_SUPPORT_LAYER,
    Evidence,
    Passage,
    SentenceSupport,
    Support,
    SupportSettings,
)

if TYPE_CHECKING:
    from ragteam.reader.answer import Readers

__all__ = ["Judge", "check_support", "support_settings"]


def support_settings(
    layer: str = DEFAULT_SUPPORT_LAYER, abstain: bool = False, checker_path: str = ""
) -> SupportSettings:
    """Settings from a layer's name (as the CLI and the HTTP API take it); an unknown name
    raises InputError naming the known ones."""
    if layer not in layer_names():
        raise InputError(f"unknown support layer {layer!r}: use one of {', '.join(layer_names())}")
    return SupportSettings(layer, checker_path, abstain)  # type: ignore[arg-type]


MAX_SENTENCES = 50  # checked one by one; the rest of a longer answer counts as unchecked
MAX_CITED = 2  # supporting passages cited per sentence


def check_support(
    question: str,
    answer: str,
    passages: list[Passage],
    settings: SupportSettings,
    trace: Trace | None = None,
    judge: Judge | None = None,
    evidence: tuple[Evidence, ...] = (),
    readers: Readers | None = None,
) -> Support:
    """Which of `passages` support each sentence of `answer` (to `question`), scored by the
    layer `settings.layer` names; `judge` plays the `llm` layer, `evidence` is what the reader
    found for the answer (a `read` answer's span is checked by the reader's confidence), `readers`
    the answer's span readers (the `reader` layer judges with the one that read the answer)."""
    started = time.perf_counter()
    note = ""
    spans = sentences(answer)
    if len(spans) > MAX_SENTENCES:
        note = f"only the first {MAX_SENTENCES} of {len(spans)} sentences were checked"
        spans = spans[:MAX_SENTENCES]
    texts = [answer[a:b] for a, b in spans]
    usable = [p for p in passages if p.text.strip()]
    lexical = [[lexical_score(question, t, passage_text(p)) for p in usable] for t in texts]
    if settings.layer == OFF:
        result = Support(OFF, 1.0, read=tuple(p.id for p in usable), note="not checked")
    else:
        layer = SUPPORT_LAYERS.load(settings.layer)
        pairs = Pairs(question, texts, usable, lexical, settings, tuple(evidence), judge, readers)
        scored: Scored = layer(pairs)
        both = "; ".join(n for n in (note, scored.note) if n)
        result = _decide(scored.layer, scored.threshold, spans, texts, usable, scored.scores, both)
        result = replace(result, extra=scored.extra, sure=scored.sure)
    result = replace(result, checked=answer)
    if trace is not None:
        trace.add(_step(result, question, lexical, time.perf_counter() - started))
    return result


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
