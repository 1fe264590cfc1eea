"""What a reading found: spans (the passage's own words at their offsets, with the sentence
around them and their probability) and the probability that no passage answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragteam.types import Span as Span  # a reading, shared with the evidence it becomes

BRIDGE_SPANS = 12  # the spans of a first reading that bridges are drawn from


@dataclass(frozen=True)
class Reading:
    """What the reader found: spans best first, and the probability that none of the passages
    answers the question (the answerability head, over all of them)."""

    spans: tuple[Span, ...]
    no_answer: float
    # (passage id, characters left unread) of each passage too long to read whole (view.py)
    unread: tuple[tuple[str, int], ...] = ()
    # every passage's yes and no readings (at the place of its best span), best first, however
    # far below the spans they rank: what a yes/no question is answered from
    outcomes: tuple[Span, ...] = ()
    tokens: int = 0  # the tokens the reader's network read (its usage, as a model's)

    @property
    def best(self) -> Span | None:
        return self.spans[0] if self.spans else None

    def answer_score(self, text: str) -> float:
        """The probability of an answer saying `text`: every span saying it, summed (the same
        words in two passages are one answer)."""
        from ragteam.common.metrics import normalize_answer

        said = normalize_answer(text)
        return min(1.0, sum(s.score for s in self.spans if normalize_answer(s.text) == said))

    def bridges(self, n: int) -> list[Span]:
        """The `n` best spans that say different words (best first): what a second search
        adds to the question, the bridge of a two-hop question."""
        from ragteam.common.metrics import normalize_answer

        found: dict[str, Span] = {}
        for s in self.spans:
            if s.kind == "span" and len(found) < n:
                found.setdefault(normalize_answer(s.text), s)
        return list(found.values())

    def to_dict(self) -> dict[str, Any]:
        said: dict[str, Any] = {
            "spans": [s.to_dict() for s in self.spans],
            "no_answer": round(self.no_answer, 4),
        }
        if self.unread:
            said["unread_characters"] = dict(self.unread)
        return said
