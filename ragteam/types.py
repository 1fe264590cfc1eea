"""Plain data shared by every part of ragteam: passages, citations, answers."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragteam.grounding import Grounding
    from ragteam.trace import Trace


@dataclass(frozen=True)
class Locator:
    """Where a passage stands in its source file, for a person to check it: the file (relative
    to the indexed folder), the page (1-based) and its printed label, the section path (headings,
    outermost first), the slide, and the passage's character span in its page, slide or section."""

    source: str
    page: int | None = None
    page_label: str = ""
    section: tuple[str, ...] = ()
    slide: int | None = None
    start: int = 0
    end: int = 0

    def describe(self) -> str:
        """E.g. `report.pdf p. 12 ("xii") § 3.2 Budget`, `deck.pptx slide 4`, `spec.docx § 2.1`."""
        parts = [self.source]
        if self.page is not None:
            label = (
                f' ("{self.page_label}")'
                if self.page_label and self.page_label != str(self.page)
                else ""
            )
            parts.append(f"p. {self.page}{label}")
        if self.slide is not None:
            parts.append(f"slide {self.slide}")
        if self.section:
            parts.append("§ " + " > ".join(self.section))
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "section": list(self.section), "text": self.describe()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Locator:
        return cls(
            source=str(data["source"]),
            page=_int_or_none(data.get("page")),
            page_label=str(data.get("page_label") or ""),
            section=tuple(str(s) for s in data.get("section") or ()),
            slide=_int_or_none(data.get("slide")),
            start=int(data.get("start") or 0),
            end=int(data.get("end") or 0),
        )


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


@dataclass(frozen=True)
class Passage:
    """A retrievable piece of a document (about 100 words). `score` is set by retrievers;
    `locator` says where it stands in its source file (None for JSONL corpora)."""

    id: str
    title: str
    text: str
    doc_id: str = ""
    score: float = 0.0
    locator: Locator | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["locator"] = self.locator.to_dict() if self.locator else None
        return data


def hit_dict(passage: Passage) -> dict[str, Any]:
    """A retrieved passage as search results show it: id, score, title, text and locator."""
    where = passage.locator
    return {
        "id": passage.id,
        "score": passage.score,
        "title": passage.title,
        "text": passage.text,
        "source": where.source if where else passage.doc_id,
        "page": where.page if where else None,
        "page_label": where.page_label if where else "",
        "section": list(where.section) if where else [],
        "slide": where.slide if where else None,
        "locator": where.describe() if where else "",
    }


@dataclass(frozen=True)
class Citation:
    passage_id: str
    title: str
    doc_id: str = ""
    locator: str = ""  # where it stands, for a person: `report.pdf p. 12 § Budget` ("" if unknown)

    @classmethod
    def of(cls, passage: Passage) -> Citation:
        where = passage.locator.describe() if passage.locator else ""
        return cls(passage.id, passage.title, passage.doc_id, where)


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
