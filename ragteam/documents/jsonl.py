"""A JSONL corpus: one `{id, title, text}` object a line, each a document of its own. Every row
is a unit of the file that names its record (`Unit.record`, the row's id, which its passages
are named after) and carries its title, so a corpus is read, cut and cited like any other
file."""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

from ragteam.documents.base import ConversionFailed, Converted, ConvertSettings, Unit
from ragteam.errors import InputError
from ragteam.jsonl import read_objects

_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")


class JsonlConverter:
    name: ClassVar[str] = "jsonl"
    version: ClassVar[str] = "1"
    suffixes: ClassVar[tuple[str, ...]] = (".jsonl",)
    max_mb: ClassVar[int] = 4096  # a corpus, not a page: read line by line
    isolated: ClassVar[bool] = False  # JSON lines, no packed format: read here

    def convert(self, path: Path, settings: ConvertSettings) -> Converted:
        units: list[Unit] = []
        seen: dict[str, int] = {}
        try:
            for number, row in read_objects(path):
                if not isinstance(row.get("text"), str):
                    raise ConversionFailed(
                        f"line {number}: expected an object with a string 'text'"
                    )
                record = str(row.get("id", f"{path.stem}-{number}"))
                if record in seen:
                    raise ConversionFailed(
                        f"document id '{record}' occurs twice (lines {seen[record]} and "
                        f"{number}); ids must be unique"
                    )
                seen[record] = number
                title = str(row.get("title") or "")
                text = paragraphs(row["text"])
                if text:
                    units.append(Unit(text, record=record, title=title))
        except ConversionFailed:
            raise
        except InputError as exc:  # `PATH:LINE: what is wrong` from the JSONL reader
            raise ConversionFailed("line " + str(exc).removeprefix(f"{path}:")) from exc
        return Converted("", units)


def paragraphs(text: str) -> str:
    """`text` with the spaces of each paragraph collapsed, paragraphs kept apart by a blank
    line (a one-paragraph text reads as its words joined by single spaces)."""
    parts = (" ".join(p.split()) for p in _BLANK_LINE.split(text))
    return "\n\n".join(p for p in parts if p)
