"""Plain data shared by every part of ragteam: passages, citations, answers."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragteam.grounding import Grounding
    from ragteam.trace import Trace


@dataclass(frozen=True)
class Passage:
    """A retrievable piece of a document (about 100 words). `score` is set by retrievers."""

    id: str
    title: str
    text: str
    doc_id: str = ""
    score: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Citation:
    passage_id: str
    title: str
    doc_id: str = ""


@dataclass
class Answer:
    question: str
    text: str
    strategy: str
    citations: list[Citation] = field(default_factory=list)
    trace: Trace | None = None

    def grounding(self) -> Grounding:
        """How well this answer is grounded (cited, uncited, no evidence, failed)."""
        from ragteam.grounding import grounding

        return grounding(self.text, len(self.citations), self.trace.steps if self.trace else [])

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.text,
            "strategy": self.strategy,
            "citations": [asdict(c) for c in self.citations],
            "cost": self.trace.totals() if self.trace else {},
            "grounding": self.grounding().to_dict(),
            "trace": self.trace.to_dict() if self.trace else None,
        }
