"""Markdown, reStructuredText and plain text: split on headings with the heading path kept,
Markdown syntax stripped (markdown-it-py, which rich already brings), a front-matter title
read, a table's rows as `cell | cell` or, with `--tables records`, as `Header: cell | ...`
records (`documents.tables`).

Each is read in the conversion child under the file's time and memory budgets, as the packed
formats are: markdown-it reads hostile Markdown in linear time but slowly (512 KB of `[` takes
6 s), and a text file holds up to `max_mb` of it."""

from __future__ import annotations

import codecs
import re
from pathlib import Path
from typing import Any, ClassVar

from ragteam.documents.base import ConversionFailed, Converted, ConvertSettings, Unit
from ragteam.documents.tables import table_lines
from ragteam.locator import Locator

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n(?:---|\.\.\.)\s*\n", re.DOTALL)


def read_text(path: Path) -> tuple[str, list[str]]:
    """A text file's characters, and a note when they were not plain UTF-8: a byte-order mark
    (UTF-8, UTF-16) is followed; otherwise UTF-8, else the encoding charset detection finds
    (Windows-1252, Latin-1, ...), said in the note; a NUL byte in the first 8 KB is binary."""
    with path.open("rb") as handle:
        head = handle.read(8192)
    utf16 = head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    if b"\0" in head and not utf16:
        raise ConversionFailed(
            f"binary, not text, though it is named {path.suffix}; rename or move it"
        )
    text, note = decode_text(path.read_bytes())
    return text.replace("\r\n", "\n").replace("\r", "\n"), [note] if note else []


def decode_text(data: bytes) -> tuple[str, str]:
    """The characters of `data`, and what was guessed to read them ("" for UTF-8)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace"), "read as UTF-16 (byte-order mark)"
    try:
        return data.decode("utf-8-sig"), ""
    except UnicodeDecodeError:
        pass
    if (western := _western(data)) is not None:
        return western, "not UTF-8: read as Windows-1252 (a guess; save it as UTF-8 to be sure)"
    from charset_normalizer import from_bytes

    best = from_bytes(data[:1_000_000]).best()
    if best is None:
        raise ConversionFailed("not UTF-8 text, and its encoding could not be told; convert it")
    return (
        data.decode(best.encoding, errors="replace"),
        f"not UTF-8: read as {best.encoding} (a guess; save it as UTF-8 to be sure)",
    )


def _western(data: bytes) -> str | None:
    """`data` as Windows-1252 when that reads as Western text: mostly ASCII letters, and its
    other characters mostly accented letters (other encodings read this way give symbols, or
    nothing but accented letters for Cyrillic).
    Detection by statistics alone takes a few accents in English text for Chinese."""
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        return None
    other = [c for c in text if ord(c) > 127]
    accented = sum(1 for c in other if c.isalpha() and 0xC0 <= ord(c) <= 0xFF)
    letters = sum(1 for c in text if c.isalpha())
    western = accented >= 0.8 * len(other) and len(other) <= 0.5 * letters  # not Cyrillic
    return text if other and western else None


_MARKS = re.compile("[\u00b6\ue000-\uf8ff]")  # a pilcrow, icon-font glyphs (Sphinx's link)


def heading_words(title: str) -> str:
    """A heading's words without the link marks generators put after them (Sphinx's "¶" or
    an icon font's private-use glyph)."""
    return " ".join(_MARKS.sub(" ", title).split())


class _Sections:
    """Collects paragraphs under the current heading path."""

    def __init__(self) -> None:
        self.path: list[tuple[int, str]] = []
        self.units: list[Unit] = []
        self._blocks: list[str] = []

    def heading(self, level: int, title: str) -> None:
        self.flush()
        title = heading_words(title)
        while self.path and self.path[-1][0] >= level:
            self.path.pop()
        self.path.append((level, title))

    def block(self, text: str) -> None:
        if text.strip():
            self._blocks.append(text.strip())

    def flush(self) -> None:
        if self._blocks:
            section = tuple(title for _, title in self.path)
            self.units.append(Unit("\n\n".join(self._blocks), Locator(section=section)))
        self._blocks = []

    def done(self) -> list[Unit]:
        self.flush()
        return self.units


def _inline_text(token: Any) -> str:
    """The words of an inline token, without emphasis, links' targets or code ticks."""
    parts: list[str] = []
    for child in token.children or []:
        if child.type in ("text", "code_inline", "html_inline"):
            parts.append(child.content if child.type != "html_inline" else "")
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(child.content)
    return re.sub(r"[ \t]+", " ", "".join(parts)).strip()


def _parsed(text: str, notes: list[str] | None) -> list[Any]:
    """markdown-it's tokens of `text`. Past its nesting limit (commonmark's 20: a list about
    ten levels deep) markdown-it drops what is deeper without a word: the text is then read
    with every line's indentation removed (its lists flat), and `notes` says so. (The limit
    is not raised: it bounds inline nesting too, where "[" a million times deep would recurse
    past Python's stack.)"""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").enable("table")
    tokens = parser.parse(text)
    limit = int(parser.options["maxNesting"])
    if max((t.level for t in tokens), default=0) < limit - 2:
        return tokens
    if notes is not None:
        notes.append(f"nested deeper than markdown's {limit // 2} levels: its lists read flat")
    return parser.parse("\n".join(line.lstrip() for line in text.splitlines()))


def markdown_units(
    text: str, records: bool = False, notes: list[str] | None = None
) -> tuple[str, list[Unit]]:
    """The title (front matter `title:` or the first level-1 heading) and the units; a
    table's rows as `cell | cell`, or with `records` as records by its header row; what
    could not be read as written is said in `notes`."""
    title = ""
    if match := _FRONT_MATTER.match(text):
        for line in match.group(1).splitlines():
            key, _, value = line.partition(":")
            if key.strip().lower() == "title":
                title = value.strip().strip("'\"")
        text = text[match.end() :]
    tokens = _parsed(text, notes)
    sections = _Sections()
    row: list[str] = []
    table: list[list[str]] = []
    header: list[str] | None = None
    prefix = ""
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            heading = _inline_text(tokens[i + 1])
            level = int(token.tag[1])
            title = title or (heading if level == 1 else "")
            sections.heading(level, heading)
        elif token.type == "inline" and tokens[i - 1].type == "paragraph_open":
            sections.block(prefix + _inline_text(token))
        elif token.type == "list_item_open":
            prefix = "- "
        elif token.type == "list_item_close":
            prefix = ""
        elif token.type in ("fence", "code_block"):
            sections.block(token.content.rstrip())
        elif token.type == "inline" and tokens[i - 1].type in ("th_open", "td_open"):
            row.append(_inline_text(token))
        elif token.type == "tr_close":
            if records and tokens[i + 1].type == "thead_close":
                header = row
            else:
                table.append(row)
            row = []
        elif token.type == "table_close":  # a table is one block, a row a line
            lines = table_lines(header, table) if records else [" | ".join(r) for r in table]
            sections.block("\n".join(lines))
            table, header = [], None
    return title, sections.done()


class MarkdownConverter:
    name: ClassVar[str] = "markdown"
    # 2: encodings detected (with a note), UTF-16 read; 3-4: tables as records when asked;
    # 5: lists nested past markdown-it's limit read flat, with a note (it dropped them)
    version: ClassVar[str] = "5"
    suffixes: ClassVar[tuple[str, ...]] = (".md", ".markdown", ".mdown", ".mkd")
    max_mb: ClassVar[int] = 100  # larger files are skipped, never read
    isolated: ClassVar[bool] = True  # under the file budgets (the module's doc)

    def convert(self, path: Path, settings: ConvertSettings) -> Converted:
        text, notes = read_text(path)
        title, units = markdown_units(text, settings.records, notes)
        return Converted(title, units, notes)


_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+:.<>_])\1{2,}\s*$")
_RST_INLINE = [
    # each pattern scans from a mark to the next of its kind, never past it: linear in the
    # text (a role's name holds no colon; a target no backtick), so 200 KB of `:a` is read
    # in a moment, not a minute
    (re.compile(r":(?:[A-Za-z][\w.+-]*:){1,2}`([^`<]*?)(?:\s*<[^>`]*>)?`"), r"\1"),
    (re.compile(r"`([^`<]+?)\s*<[^>`]+>`_{1,2}"), r"\1"),  # `text <url>`_
    (re.compile(r"``([^`]+)``"), r"\1"),
    (re.compile(r"\*\*([^*]+)\*\*"), r"\1"),
    (re.compile(r"\*([^*]+)\*"), r"\1"),
    (re.compile(r"`([^`]+)`_{0,2}"), r"\1"),
]


def rst_units(text: str) -> tuple[str, list[Unit]]:
    """Sections by their underlines (levels in order of first use, as docutils does);
    directives' option lines and comments dropped, inline markup stripped."""
    lines = text.split("\n")
    styles: list[str] = []
    sections = _Sections()
    title = ""
    paragraph: list[str] = []

    def end_paragraph() -> None:
        if paragraph:
            sections.block(_rst_inline(" ".join(s.strip() for s in paragraph)))
            paragraph.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and _ADORNMENT.match(nxt) and len(nxt.rstrip()) >= len(line.rstrip()):
            end_paragraph()
            overline = i > 0 and _ADORNMENT.match(lines[i - 1]) is not None
            style = ("o" if overline else "u") + nxt.strip()[0]
            if style not in styles:
                styles.append(style)
            heading = _rst_inline(line.strip())
            title = title or heading
            sections.heading(styles.index(style) + 1, heading)
            i += 2
            continue
        if (
            _ADORNMENT.match(line)
            or line.startswith(".. ")
            or re.match(r"^\s+:\w+:", line)
            or not line.strip()
        ):
            end_paragraph()
        else:
            paragraph.append(line)
        i += 1
    end_paragraph()
    return title, sections.done()


def _rst_inline(text: str) -> str:
    for pattern, replacement in _RST_INLINE:
        text = pattern.sub(replacement, text)
    return text


class RstConverter:
    name: ClassVar[str] = "rst"
    version: ClassVar[str] = "2"  # 2: encodings detected (with a note), UTF-16 read
    suffixes: ClassVar[tuple[str, ...]] = (".rst", ".rest")
    max_mb: ClassVar[int] = 100  # larger files are skipped, never read
    isolated: ClassVar[bool] = True  # under the file budgets (the module's doc)

    def convert(self, path: Path, settings: ConvertSettings) -> Converted:
        text, notes = read_text(path)
        title, units = rst_units(text)
        return Converted(title, units, notes)


_OVERSTRUCK = re.compile(r"[^\n]\x08")


class TextConverter:
    """Plain text: paragraphs kept, no sections; a first line `# Title` names the document."""

    name: ClassVar[str] = "text"
    # 2: encodings detected (with a note), UTF-16 read; 3: overstruck characters (bold and
    # underline in a man page rendered for a terminal) read as the letters they show
    version: ClassVar[str] = "3"
    suffixes: ClassVar[tuple[str, ...]] = (".txt", ".text")
    max_mb: ClassVar[int] = 100  # larger files are skipped, never read
    isolated: ClassVar[bool] = True  # under the file budgets (the module's doc)

    def convert(self, path: Path, settings: ConvertSettings) -> Converted:
        text, notes = read_text(path)
        if path.suffix.lower() not in self.suffixes:
            named = f"{path.suffix} files" if path.suffix else "files without a suffix"
            notes.insert(0, f"read as plain text: no converter names {named}; its bytes are text")
        text = _OVERSTRUCK.sub("", text)  # a man page rendered for a terminal: "N\bNA\bA"
        first = text.lstrip().split("\n", 1)[0]
        title = first[2:].strip() if first.startswith("# ") else ""
        blocks = [b.strip() for b in re.split(r"\n\s*\n", text) if b.strip()]
        return Converted(title, [Unit("\n\n".join(blocks))] if blocks else [], notes)
