"""What a verdict is decided from: for a true/false claim, or for each option of a multiple-choice
question, a few signals of what the retrieved passages say (the span reader's yes / no /
not-found reading, how close the closest passage is, how many of the words are in it) beside the
MiniLM embedding of the statement itself (what training claims and questions teach about how
such statements usually turn out).

Every signal comes from parts that ship (the span reader, the installed MiniLM): the fitted
decision (`ragteam.verdict.fitted`) reads the same features at training and at answer time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ragteam.common.text import words

if TYPE_CHECKING:
    from ragteam.reader import Reader, Reading
    from ragteam.types import Passage

READ_TOP = 64  # readings kept: every window's yes and no, and the best spans
CLAIM_SIGNALS = ("yes", "no", "none", "closest", "words", "passages")
OPTION_SIGNALS = ("closest", "words", "agrees", "asked")


def claim_question(claim: str) -> str:
    """The question the reader is asked about a claim (its yes/no head answers it)."""
    return f"Is it true that {claim.strip().rstrip('.?!')}?"


@dataclass(frozen=True)
class ClaimSignals:
    values: np.ndarray  # CLAIM_SIGNALS then the claim's embedding
    reading: Reading | None
    closest: int  # index of the passage closest to the claim (-1 with none)

    def said(self, kind: str) -> float:
        """A named signal of CLAIM_SIGNALS (e.g. the reader's "yes" probability)."""
        return float(self.values[CLAIM_SIGNALS.index(kind)])


def claim_signals(
    claim: str, passages: list[Passage], reader: Reader, encoder: Any
) -> ClaimSignals:
    """The claim's features against `passages` (retrieved for it)."""
    kept = [p for p in passages if p.text.strip()]
    texts = [p.text for p in kept]
    vectors = encoder.encode([claim, *texts])
    own = vectors[0]
    if not texts:
        head = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
        return ClaimSignals(np.concatenate([np.array(head, dtype="float32"), own]), None, -1)
    reading = reader.read(claim_question(claim), kept, top=READ_TOP)
    similarity = vectors[1:] @ own
    closest = int(np.argmax(similarity))
    said = set(words(claim))
    share = max((len(said & set(words(t))) / len(said) if said else 0.0) for t in texts)
    head = [
        _kind(reading, "yes"),
        _kind(reading, "no"),
        reading.no_answer,
        float(similarity[closest]),
        share,
        1.0,
    ]
    return ClaimSignals(np.concatenate([np.array(head, dtype="float32"), own]), reading, closest)


def option_signals(
    question: str,
    options: list[str],
    passages: list[Passage],
    reader: Reader,
    encoder: Any,
) -> np.ndarray:
    """One row per option: OPTION_SIGNALS, then the elementwise product of the question's and
    the option's embeddings (a learned, per-dimension match of answer to question)."""
    texts = [p.text for p in passages if p.text.strip()]
    statements = [f"{question} {o}" for o in options]
    vectors = encoder.encode([question, *options, *statements, *texts])
    q = vectors[0]
    opt = vectors[1 : 1 + len(options)]
    stated = vectors[1 + len(options) : 1 + 2 * len(options)]
    passage_vectors = vectors[1 + 2 * len(options) :]
    reading = reader.read(question, [p for p in passages if p.text.strip()], top=READ_TOP)
    held = [set(words(t)) for t in texts]
    rows = []
    for i, option in enumerate(options):
        said = set(words(option)) - set(words(question))
        closest = float(np.max(passage_vectors @ stated[i])) if texts else 0.0
        share = max((len(said & h) / len(said) for h in held), default=0.0) if said else 0.0
        signals = [closest, share, _agreement(reading, option), float(opt[i] @ q)]
        rows.append(np.concatenate([np.array(signals, dtype="float32"), opt[i] * q]))
    return np.stack(rows)


def _kind(reading: Reading, kind: str) -> float:
    return min(1.0, sum(s.score for s in reading.spans if s.kind == kind))


def _agreement(reading: Reading, option: str) -> float:
    """How much of the reader's probability falls on spans that share words with `option`
    (token F1, weighted by each span's probability)."""
    from ragteam.common.metrics import f1_score

    return sum(s.score * f1_score(s.text, [option]) for s in reading.spans if s.kind == "span")
