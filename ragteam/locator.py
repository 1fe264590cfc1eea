"""Where a passage stands in its source file, from the converter that read it to the citation
that shows it: one `Locator`, worded (`describe`) only when a person is shown it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Locator:
    """Where a passage stands in its source file, for a person to check it: the file (relative
    to the indexed folder), the page (1-based) and its printed label, the section path (headings,
    outermost first), the slide, and the passage's character span in its page, slide or section.
    A converter's unit stands at a locator with no source yet (the sync knows the file's path)
    and no span (the chunker cuts it)."""

    source: str = ""
    page: int | None = None
    page_label: str = ""
    section: tuple[str, ...] = ()
    slide: int | None = None
    start: int = 0
    end: int = 0
    record: str = ""  # the document of a collection (a JSONL row's id)

    def worded(self, title: str = "") -> str:
        """`describe()`, and for a corpus row its passage's title too (`corpus.jsonl #hp00008
        (Village accountant)`): what a citation shows."""
        where = self.describe()
        return f"{where} ({title})" if self.record and title else where

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
        if self.record:
            parts.append(f"#{self.record}")
        if self.section:
            parts.append("§ " + " > ".join(self.section))
        return " ".join(parts)

    def fields(self) -> dict[str, Any]:
        """What the locator is (what an index's checksum covers): not its display text. A
        locator in no collection has no `record` field, as before there were any."""
        # written out, in the fields' order: `dataclasses.asdict` deep-copies every value, and
        # this runs twice a passage when an index is written (75 of 220 s at a million)
        fields: dict[str, Any] = {
            "source": self.source,
            "page": self.page,
            "page_label": self.page_label,
            "section": list(self.section),
            "slide": self.slide,
            "start": self.start,
            "end": self.end,
        }
        if self.record:
            fields["record"] = self.record
        return fields

    def to_dict(self) -> dict[str, Any]:
        return {**self.fields(), "text": self.describe()}

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
            record=str(data.get("record") or ""),
        )


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)
