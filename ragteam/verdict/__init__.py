"""Verdicts: true/false for a claim, an option for a multiple-choice question, decided by a
fitted model over what the span reader reads in the retrieved passages and what the claim or
option says (`ragteam.verdict.features`, `ragteam.verdict.fitted`), never by free text. A
verdict names the passage it rests on, or says that the passages neither support nor
contradict the claim."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragteam.verdict.features import claim_signals, option_signals
from ragteam.verdict.fitted import Verdicts, default_verdicts, load_verdicts

if TYPE_CHECKING:
    from ragteam.reader import Reader
    from ragteam.types import Passage

__all__ = [
    "Verdict",
    "Verdicts",
    "claim_verdict",
    "choice_verdict",
    "default_verdicts",
    "load_verdicts",
]

GROUNDED = 0.5  # the reader's yes (or no) probability at which a passage is said to back it


@dataclass(frozen=True)
class Verdict:
    """`label` ("true"/"false" or an option's label), its probability, the passage it rests on
    ("" when the passages say nothing either way), the sentence there, and why, in a sentence."""

    label: str
    probability: float
    passage_id: str
    sentence: str
    reason: str
    scores: dict[str, float]  # every label's probability

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "probability": round(self.probability, 4),
            "passage_id": self.passage_id,
            "sentence": self.sentence,
            "reason": self.reason,
            "scores": {k: round(v, 4) for k, v in self.scores.items()},
        }


def claim_verdict(
    claim: str, passages: list[Passage], reader: Reader, encoder: Any, verdicts: Verdicts
) -> Verdict:
    """True or false for `claim`, resting on the passage the reader's yes/no reading found."""
    signals = claim_signals(claim, passages, reader, encoder)
    decision = verdicts.claim
    p_true = decision.probability(signals.values)
    label = decision.label(p_true)
    scores = {"true": p_true, "false": 1 - p_true}
    reading = signals.reading
    says = "yes" if label == "true" else "no"
    backing = None
    if reading is not None:
        backing = max(
            (s for s in reading.spans if s.kind == says), key=lambda s: s.score, default=None
        )
    if reading is None:
        why = (
            "no passage was read; the verdict rests on what similar training claims turned "
            "out to be"
        )
        return Verdict(label, scores[label], "", "", why, scores)
    if backing is None or signals.said(says) < GROUNDED:
        why = (
            "the passages neither support nor contradict this claim; the verdict rests on "
            "what similar training claims turned out to be"
        )
        if decision.use_majority:
            why = "the passages neither support nor contradict this claim; most claims are " + label
        return Verdict(label, scores[label], "", "", why, scores)
    verb = "supports" if label == "true" else "contradicts"
    return Verdict(
        label,
        scores[label],
        backing.passage_id,
        backing.sentence,
        f"the passage {verb} it: {backing.sentence.strip()}",
        scores,
    )


def choice_verdict(
    question: str,
    choices: dict[str, str],
    passages: list[Passage],
    reader: Reader,
    encoder: Any,
    verdicts: Verdicts,
) -> Verdict:
    """The option whose fitted score over the passages is highest."""
    labels = list(choices)
    rows = option_signals(question, [choices[k] for k in labels], passages, reader, encoder)
    probabilities = verdicts.choice.probabilities(rows)
    best = int(probabilities.argmax())
    scores = {label: float(p) for label, p in zip(labels, probabilities, strict=True)}
    option = choices[labels[best]]
    texts = {p.id: p.text for p in passages}
    found = [pid for pid, text in texts.items() if option.lower() in text.lower()]
    if found:
        return Verdict(
            labels[best],
            scores[labels[best]],
            found[0],
            "",
            f"{option!r} stands in passage {found[0]}",
            scores,
        )
    return Verdict(
        labels[best],
        scores[labels[best]],
        "",
        "",
        f"no passage names {option!r}; the closest match of question, option and passages",
        scores,
    )
