"""The converter interface: a file in, units out (text a person and a model read, plus where
it stands). Converters are registered by name like strategies and tools: built-ins below, and
installed packages through the `ragteam.converters` entry-point group."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from ragteam.errors import InputError
from ragteam.locator import Locator
from ragteam.plugins import Registry
from ragteam.settings import flag


class ConversionFailed(InputError):
    """One file could not be read; the message says why and what to do (the sync goes on)."""


@dataclass(frozen=True)
class Unit:
    """A run of text at one place of its file: a page, a slide or a section. Paragraphs are
    separated by blank lines; no Markdown syntax is left in it."""

    text: str
    # where it stands: its page and the page's printed label, its section path, its slide, or
    # the collection's document (a JSONL row's id: its passages are named so)
    where: Locator = Locator()
    title: str = ""  # a collection document's own title (a file's title is `Converted.title`)


@dataclass(frozen=True)
class Converted:
    """What a converter read of one file: its title ("" when the file names none), its units in
    reading order, and notes a person should see (e.g. pages with no text layer)."""

    title: str
    units: list[Unit]
    notes: list[str] = field(default_factory=list)


HTML_MODES = ("main", "whole")
TABLE_MODES = ("cells", "records")


@dataclass(frozen=True)
class ConvertSettings:
    """Choices that change what a converter reads. `html`: `main` keeps a web page's main
    content (boilerplate such as menus dropped), `whole` keeps every text of the page (for
    documentation sites, where boilerplate removal may drop content). `tables`: `cells` writes
    a table's row as `cell | cell` (what the shipped reader was trained on), `records` as
    `Header: cell | Header: cell` by the table's header row (`documents.tables`; measured in
    docs/benchmarks.md §47: better only for a reader trained on records)."""

    html: str = flag("main", "main (a page's main content) | whole (every text)")
    tables: str = flag(
        "cells", "cells (a row as `cell | cell`) | records (`Header: cell | ...` by its header)"
    )

    def __post_init__(self) -> None:
        if self.html not in HTML_MODES:
            known = ", ".join(HTML_MODES)
            raise ValueError(f"--html: unknown html mode '{self.html}'; known: {known}")
        if self.tables not in TABLE_MODES:
            known = ", ".join(TABLE_MODES)
            raise ValueError(f"--tables: unknown tables mode '{self.tables}'; known: {known}")

    @property
    def records(self) -> bool:
        return self.tables == "records"

    def key(self) -> str:  # the default's key is the one written before `tables` existed
        return f"html={self.html}" + (f";tables={self.tables}" if self.records else "")

    @classmethod
    def from_key(cls, key: str) -> ConvertSettings:
        """The settings `key()` wrote (ValueError for any other text)."""
        fields = dict(part.partition("=")[::2] for part in key.split(";"))
        html, tables = fields.pop("html", None), fields.pop("tables", "cells")
        if fields or html not in HTML_MODES or tables not in TABLE_MODES:
            raise ValueError(f"not a converter settings key: {key!r}")
        return cls(html, tables)


class Converter(Protocol):
    """One format family. `version` changes whenever its output for the same bytes changes
    (cached conversions of an older version are read again)."""

    name: ClassVar[str]
    version: ClassVar[str]
    suffixes: ClassVar[tuple[str, ...]]
    # files larger than this are skipped with the reason, before they are hashed or read
    # (a converter that does not say gets DEFAULT_MAX_MB)
    max_mb: ClassVar[int]
    # whether a file is read in a child process with a time and memory budget
    # (documents/isolated.py): a parser may run long or crash on a small hostile file (a
    # converter that does not say is isolated; only a streaming reader of bounded lines, as
    # JSONL's, may say no)
    isolated: ClassVar[bool]

    def convert(self, path: Path, settings: ConvertSettings) -> Converted: ...


DEFAULT_MAX_MB = 100


def size_cap_mb(converter: Any) -> int:
    return int(getattr(converter, "max_mb", DEFAULT_MAX_MB))


def is_isolated(converter: Any) -> bool:
    return bool(getattr(converter, "isolated", True))


CONVERTERS = Registry(
    "document converter",
    "ragteam.converters",
    {
        "pdf": "ragteam.documents.pdf:PdfConverter",
        "docx": "ragteam.documents.office:DocxConverter",
        "pptx": "ragteam.documents.office:PptxConverter",
        "html": "ragteam.documents.web:HtmlConverter",
        "markdown": "ragteam.documents.text:MarkdownConverter",
        "rst": "ragteam.documents.text:RstConverter",
        "text": "ragteam.documents.text:TextConverter",
        "jsonl": "ragteam.documents.jsonl:JsonlConverter",
    },
)


def converters_by_suffix() -> dict[str, Converter]:
    """Each suffix (lower case) and the converter that reads it."""
    found: dict[str, Converter] = {}
    for name in CONVERTERS.names():
        converter = CONVERTERS.load(name)()
        for suffix in converter.suffixes:
            found.setdefault(suffix.lower(), converter)
    return found


def converter_for(path: Path, by_suffix: dict[str, Converter] | None = None) -> Converter | None:
    """The converter for a file, by its suffix in any case (`MEETING.TXT` is text); for a
    suffix no converter names (`squid.conf`, `README`, `tar.1`), the text converter when the
    file's bytes are text (`looks_like_text`); None otherwise."""
    known = converters_by_suffix() if by_suffix is None else by_suffix
    found = known.get(path.suffix.lower())
    if found is None and looks_like_text(path):
        return known.get(".txt")
    return found


SNIFF_BYTES = 8192
CONTROL_SHARE = 0.01  # of a text file's first bytes that are control characters, at most
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\v\b\x1b")  # tabs, breaks, man's overstrike, escapes


def looks_like_text(path: Path) -> bool:
    """Whether a file's first SNIFF_BYTES are text: UTF-16 with its byte-order mark, or no NUL
    byte and at most CONTROL_SHARE of other control characters (UTF-8, Latin-1 and the like
    pass; images, archives, executables and databases hold NULs or controls early). An empty
    file is text (a sync then reports it failed: empty, as any empty document)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError:
        return False
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    if b"\0" in head:
        return False
    controls = sum(1 for b in head if (b < 32 or b == 127) and b not in _TEXT_CONTROLS)
    return controls <= CONTROL_SHARE * len(head)


def supported_suffixes() -> list[str]:
    return sorted(converters_by_suffix())
