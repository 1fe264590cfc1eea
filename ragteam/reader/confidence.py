"""How sure the reader is of a span it answers with: the product of two logistic regressions
over what its reading says about the span, fitted on held training questions asked of a folder
(`ragteam.reader.training.calibrate`) and shipped in the weights' calibration file:

- `answerable`: that the passages hold an answer at all, from everything below;
- `right`: that the span is the answer, given that they hold one, from its words' probability.

The probability of the span's words (the shared-normalised softmax, every passage saying them
summed) ranks right answers over wrong ones well when the passages hold the answer, and poorly
when they do not: a reader sure of a span in a folder without the answer is sure of the wrong
thing. What else the reading says tells those apart better on held questions: how far the
answer stands above the next different one, how many passages give it, the no-answer
probability, and how far down the retrieval order its passage was. One model over all of it
ranked the answerable questions' answers worse than the words' probability alone; the two
parts keep that ranking and add the other (docs/benchmarks.md §45).

Calibration files from before this model have none: the confidence is then the probability of
the span's words, as it was."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ragteam.common.linear import Linear, sigmoid
from ragteam.common.metrics import normalize_answer
from ragteam.errors import InputError
from ragteam.reader.spans import Reading, Span

FEATURES = (
    "answer_probability",  # log-odds of the span's words over all passages
    "no_answer",  # log-odds of the answerability head's "no answer"
    "margin",  # the answer's probability minus the next different answer's
    "passages_agreeing",  # passages among the reading's spans that say the same words
    "passage_rank",  # the position of the span's passage in the order read (0: first)
)


def _log_odds(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def span_features(reading: Reading, span: Span, order: dict[str, int]) -> list[float]:
    """FEATURES of `span` in `reading`; `order` maps passage ids to their position as read."""
    said = normalize_answer(span.text)
    probability, others, agreeing = 0.0, {}, set()
    for s in reading.spans:
        words = normalize_answer(s.text)
        if words == said:
            probability += s.score
            agreeing.add(s.passage_id)
        else:
            others[words] = others.get(words, 0.0) + s.score
    probability = min(1.0, probability)
    return [
        _log_odds(probability),
        _log_odds(reading.no_answer),
        probability - max(others.values(), default=0.0),
        float(len(agreeing)),
        float(order.get(span.passage_id, len(order))),
    ]


@dataclass(frozen=True)
class Part:
    """One logistic regression of the confidence, over the FEATURES it names."""

    features: tuple[str, ...]
    linear: Linear

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """Its probability for each row of `x` (one column per FEATURES)."""
        columns = [FEATURES.index(f) for f in self.features]
        return sigmoid(self.linear(x[:, columns].astype("float32")))

    def to_json(self) -> dict[str, Any]:
        return {"features": list(self.features), "linear": asdict(self.linear)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Part:
        features = tuple(data["features"])
        unknown = [f for f in features if f not in FEATURES]
        if unknown or not features:
            raise InputError(f"its confidence model reads {features}; this version {FEATURES}")
        linear = Linear(**data["linear"])
        if not len(linear.weights) == len(linear.mean) == len(linear.scale) == len(features):
            raise InputError(f"its confidence model's {features} have not one weight each")
        return cls(features, linear)


@dataclass(frozen=True)
class Confidence:
    """The probability that a span is a right answer: that the passages hold one
    (`answerable`) times that the span is it when they do (`right`)."""

    answerable: Part
    right: Part

    def __call__(self, reading: Reading, span: Span, order: dict[str, int]) -> float:
        return float(self.probabilities(np.asarray([span_features(reading, span, order)]))[0])

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """The confidence for each row of `x` (one column per FEATURES)."""
        return self.answerable.probabilities(x) * self.right.probabilities(x)

    def to_json(self) -> dict[str, Any]:
        return {"answerable": self.answerable.to_json(), "right": self.right.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Confidence:
        """The model a calibration file holds; an InputError (for the caller to name the file)
        when it reads features this version does not make, or is malformed."""
        return cls(Part.from_json(data["answerable"]), Part.from_json(data["right"]))
