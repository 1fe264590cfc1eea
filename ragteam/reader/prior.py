"""Which passage's span answers: the reader's probability of a span weighed against its
passage's place in the order read, by two numbers fitted on questions people wrote
(`ragteam.reader.training.prior`) and shipped in the weights' calibration file.

The reader reads every passage at once and scores all their spans on one scale, so its best
span is often in a passage the search ranked low while the passage the search ranked first
held the answer (docs/benchmarks.md §75). The prior orders the spans by

    score_power * log(probability) - rank_cost * position of the span's passage

(a conditional logit over the spans read: the higher, the likelier the span is the answer),
so a later passage's span comes first only where the reader is much surer of it. Within one
passage the order stays the reader's. Only the order changes: each span keeps its
probability, which the confidence and the label read as before."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

from ragteam.errors import InputError
from ragteam.reader.spans import Reading, Span

FLOOR = 1e-9  # the least probability a span's log is taken of


@dataclass(frozen=True)
class PassagePrior:
    """A span's rank weight: `score_power` times the log of its probability, less `rank_cost`
    for each passage read before its own."""

    score_power: float
    rank_cost: float

    def weight(self, span: Span, position: int) -> float:
        return self.score_power * math.log(max(span.score, FLOOR)) - self.rank_cost * position

    def ordered(self, reading: Reading, order: dict[str, int]) -> Reading:
        """`reading` with its spans best first by weight (`order`: passage id -> its position
        as read; a passage not in it counts as read last)."""
        last = len(order)
        spans = sorted(reading.spans, key=lambda s: -self.weight(s, order.get(s.passage_id, last)))
        return replace(reading, spans=tuple(spans))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PassagePrior:
        """The prior a calibration file holds; an InputError (for the caller to name the file)
        when it is malformed."""
        try:
            prior = cls(float(data["score_power"]), float(data["rank_cost"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"its passage prior is malformed ({exc})") from exc
        if not (prior.score_power > 0 and math.isfinite(prior.rank_cost)):
            raise InputError(f"its passage prior {prior} needs a positive score_power")
        return prior
