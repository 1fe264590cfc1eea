"""A JSONL corpus: one `{id, title, text}` object a line, each a document of its own. Every row
is a unit of the file that names its record (`Unit.where.record`, the row's id, which its passages
are named after) and carries its title, so a corpus is read, cut and cited like any other
file."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from ragteam.common.jsonl import read_objects
from ragteam.documents.base import ConversionFailed, Converted, ConvertSettings, Unit
from ragteam.errors import InputError
from ragteam.locator import Locator

_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    text: str


def read_rows(path: Path) -> Iterator[Document]:
    """The documents of a JSONL corpus, one a row: a row without a string `text`, or with an
    id an earlier row had, is an InputError naming the file and line."""
    seen: dict[str, int] = {}
    for number, row in read_objects(path):
        if not isinstance(row.get("text"), str):
            raise InputError(f"{path}:{number}: expected an object with a string 'text'")
        doc_id = str(row.get("id", f"{path.stem}-{number}"))
        if doc_id in seen:
            raise InputError(
                f"{path}:{number}: document id '{doc_id}' occurs twice (first on line "
                f"{seen[doc_id]}); ids must be unique"
            )
        seen[doc_id] = number
        yield Document(doc_id, str(row.get("title") or ""), row["text"])


class JsonlConverter:
    name: ClassVar[str] = "jsonl"
    # 2: a row's title its own, not a section; rows with no text noted (1 was never released,
    # but main held it: conversions cached under it are read again)
    version: ClassVar[str] = "2"
    suffixes: ClassVar[tuple[str, ...]] = (".jsonl",)
    max_mb: ClassVar[int] = 4096  # a corpus, not a page: read line by line
    isolated: ClassVar[bool] = False  # JSON lines, no packed format: read here

    def convert(self, path: Path, settings: ConvertSettings) -> Converted:
        try:
            docs = list(read_rows(path))
        except InputError as exc:  # `PATH:LINE: what is wrong`, said of this file
            raise ConversionFailed("line " + str(exc).removeprefix(f"{path}:")) from exc
        texts = [(doc, paragraphs(doc.text)) for doc in docs]
        units = [Unit(text, Locator(record=doc.id), title=doc.title) for doc, text in texts if text]
        empty = [doc.id for doc, text in texts if not text]
        notes = [
            f"{len(empty)} rows with no text, so no passage: "
            + ", ".join(empty[:5])
            + (" ..." if len(empty) > 5 else "")
        ]
        return Converted("", units, notes if empty else [])


def paragraphs(text: str) -> str:
    """`text` with the spaces of each paragraph collapsed, paragraphs kept apart by a blank
    line (a one-paragraph text reads as its words joined by single spaces)."""
    parts = (" ".join(p.split()) for p in _BLANK_LINE.split(text))
    return "\n\n".join(p for p in parts if p)
