"""Support layers: one small protocol, one registry (`SUPPORT_LAYERS`, entry-point group
`ragteam.support_layers`). A layer gets the question, the answer's sentences, the passages
read, the lexical scores (always computed) and the answer's evidence, and returns a score per
(sentence, passage) pair and the threshold at or above which a pair counts as support.

A layer that cannot do its work (no weights, no judge) says so in `note` and hands back the
lexical scores with the lexical threshold, naming `lexical` as the layer that decided."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ragteam.errors import ParseError, RagteamError
from ragteam.plugins import Registry
from ragteam.support.lexical import LEXICAL_THRESHOLD
from ragteam.types import Evidence, Passage, SupportSettings

if TYPE_CHECKING:
    from ragteam.reader.answer import Readers

# (sentence, passage text) -> whether the passage states the sentence; raises RagteamError
Judge = Callable[[str, str], bool]
CHECKED_PER_SENTENCE = 3  # passages a model reads per sentence (the lexically closest)
JUDGED = 0.5  # the llm layer's scores are 1 (the judge backs the pair) or 0: its threshold
OFF = "off"  # not a layer: nothing is checked


@dataclass(frozen=True)
class Pairs:
    """What a layer reads: every (sentence, passage) pair of one answer."""

    question: str
    sentences: list[str]
    passages: list[Passage]
    lexical: list[list[float]]  # sentence x passage
    settings: SupportSettings
    evidence: tuple[Evidence, ...] = ()
    judge: Judge | None = None
    readers: Readers | None = None  # the answer's span readers (`reader` layer)


@dataclass(frozen=True)
class Scored:
    layer: str  # the layer that decided (lexical when the one asked for could not)
    threshold: float
    scores: list[list[float]]
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    # whether the span reader would give a written answer itself, with confidence (the reader
    # layer's; None: not asked, as for the reader's own answer or another layer)
    sure: bool | None = None


class SupportLayer(Protocol):
    def __call__(self, pairs: Pairs) -> Scored: ...


SUPPORT_LAYERS = Registry(
    "support layer",
    "ragteam.support_layers",
    {
        "lexical": "ragteam.support.layers:lexical",
        "checker": "ragteam.support.layers:checker",
        "llm": "ragteam.support.layers:llm",
        "reader": "ragteam.support.reading:reader",
    },
)


def layer_names() -> list[str]:
    """Every name `--support` takes: the registered layers and `off`."""
    return [*SUPPORT_LAYERS.names(), OFF]


def lexical(pairs: Pairs, note: str = "") -> Scored:
    """New content words of the sentence found in the passage (`ragteam.support.lexical`)."""
    return Scored("lexical", LEXICAL_THRESHOLD, pairs.lexical, note)


def closest(scores: list[list[float]]) -> list[tuple[int, int]]:
    """(sentence, passage) pairs worth a closer look: each sentence's CHECKED_PER_SENTENCE
    best-scoring passages."""
    found: list[tuple[int, int]] = []
    for i, row in enumerate(scores):
        order = sorted(range(len(row)), key=lambda j: -row[j])
        found += [(i, j) for j in order[:CHECKED_PER_SENTENCE]]
    return found


def passage_text(p: Passage) -> str:
    return f"{p.title}. {p.text}" if p.title else p.text


def checker(pairs: Pairs) -> Scored:
    """A trained MiniLM checker (`ragteam train support`) on each sentence's closest passages."""
    from pathlib import Path

    from ragteam.support.checker import claim_text, load_checker

    path = pairs.settings.checker_path
    try:
        model = load_checker(Path(path) if path else None)
    except (RagteamError, ImportError, OSError) as exc:
        why = f"the trained checker is unavailable ({exc}): the lexical layer alone"
        return lexical(pairs, why)
    chosen = closest(pairs.lexical)
    probs = model.scores(
        [claim_text(pairs.question, pairs.sentences[i]) for i, _ in chosen],
        [passage_text(pairs.passages[j]) for _, j in chosen],
    )
    scores = [[0.0] * len(pairs.passages) for _ in pairs.sentences]
    for (i, j), prob in zip(chosen, probs, strict=True):
        scores[i][j] = prob
    return Scored("checker", model.threshold, scores, extra={"checker": model.identity})


def llm(pairs: Pairs) -> Scored:
    """A model judges each sentence against its closest passages: 1 where it says the passage
    states the sentence, else 0. A pair it gives no verdict on keeps the lexical verdict, and
    after a failure that is not a bad reply (an unreachable server) it is not asked again."""
    if pairs.judge is None:
        return lexical(pairs, "no model to judge with: the lexical layer alone")
    scores = [[0.0] * len(pairs.passages) for _ in pairs.sentences]
    failed, broken = 0, ""
    for i, j in closest(pairs.lexical):
        if not broken:
            try:
                scores[i][j] = float(
                    pairs.judge(pairs.sentences[i], passage_text(pairs.passages[j]))
                )
                continue
            except ParseError:
                failed += 1
            except RagteamError as exc:
                broken = str(exc)
        scores[i][j] = float(pairs.lexical[i][j] >= LEXICAL_THRESHOLD)
    parts = []
    if failed:
        parts.append(f"{failed} pair{'' if failed == 1 else 's'} (a reply that was no verdict)")
    if broken:
        parts.append(f"every pair from the model's failure on ({broken})")
    note = f"the judge gave no verdict on {'; '.join(parts)}: the lexical verdict stands for them"
    return Scored("llm", JUDGED, scores, note if parts else "")
