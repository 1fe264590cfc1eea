"""PDF: PDFium (pypdfium2) reads each page's text; pypdf reads the printed page labels ("xii",
"A-3") and the outline. A bookmark gives its section from where it points: a page is one unit,
or, where a bookmark points below its top, one unit above the heading (the section before, which
the page continues) and one from the heading on. Running headers, footers and page numbers, and
the entries of contents and index pages, are left out (`ragteam.documents.furniture`); pages
with no text layer are counted and reported (a page with nothing on it as blank, one with
images and no text as scanned)."""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from ragteam.documents.base import ConversionFailed, Converted, ConvertSettings, Unit
from ragteam.documents.furniture import strip_furniture, without_contents, without_leaders
from ragteam.locator import Locator

# a line with room for the next word within this share of the page's full width was broken on
# purpose (proportional fonts make a full line's count of characters vary)
FULL_LINE = 0.9


# A page's content stream of a real document inflates to kilobytes; PDFium holds about 14 times
# a stream's inflated size while it reads the page (the 2026-11-26 probe: a 1.2 MB file whose
# one stream inflated to 400 MiB peaked at 5.5 GB). Streams other than images are inflated
# first, a window at a time, and the file is refused past either budget.
MAX_STREAM_INFLATED = 32 * 2**20  # one stream
MAX_INFLATED = 512 * 2**20  # all of a file's non-image streams together
_STREAM = re.compile(rb"stream\r?\n")
_WINDOW = 2**20


def check_streams(path: Path) -> None:
    """Refuse a PDF whose compressed streams (images aside) inflate past the budgets, without
    ever holding more than a window of inflated bytes."""
    import mmap

    total = 0
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        for found in _STREAM.finditer(data):
            if data[max(0, found.start() - 3) : found.start()] == b"end":
                continue  # `endstream`
            own = data[max(0, found.start() - 400) : found.start()].rsplit(b"obj", 1)[-1]
            if b"FlateDecode" in own and b"/Image" not in own:
                total += _inflated(data, found.end())
            if total > MAX_INFLATED:
                raise ConversionFailed(
                    f"its streams inflate to over {MAX_INFLATED // 2**20} MiB: refused as a "
                    "possible decompression bomb"
                )


def _inflated(data: Any, at: int) -> int:
    """The inflated size of the Flate stream starting at `at` (0 if it is not Flate data: PDFium
    decides), a window at a time; past MAX_STREAM_INFLATED the file is refused."""
    import zlib

    inflater, size = zlib.decompressobj(), 0
    pending = b""
    try:
        while size <= MAX_STREAM_INFLATED and not inflater.eof:
            if not pending:
                pending, at = data[at : at + _WINDOW], at + _WINDOW
                if not pending:
                    return size
            size += len(inflater.decompress(pending, _WINDOW))
            pending = inflater.unconsumed_tail
    except zlib.error:
        return 0
    if size > MAX_STREAM_INFLATED:
        raise ConversionFailed(
            f"a stream of it inflates to over {MAX_STREAM_INFLATED // 2**20} MiB (no page's "
            "text needs that much): refused as a possible decompression bomb"
        )
    return size


Section = tuple[str, ...]
Start = tuple[
    int, float | None, Section
]  # a bookmark: page (0-based), top (None: the page's), path


def page_texts(path: Path, cuts: dict[int, list[float]] | None = None) -> list[list[str]]:
    """Each page's text as PDFium extracts it, in parts: one, or, for a page with `cuts`
    (heights from the page's bottom, highest first), the text above the first cut, then from
    each cut to the next; no parts for a blank page (no text, no image). Encrypted files
    open if no password is needed."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        reason = str(exc)
        if "password" in reason.lower():
            raise ConversionFailed(
                "encrypted with a password: save an unencrypted copy (e.g. `qpdf --decrypt "
                "--password=... in.pdf out.pdf`) and index that"
            ) from exc
        raise ConversionFailed(f"not a readable PDF ({reason}); is it complete?") from exc
    try:
        texts = []
        for number in range(len(pdf)):
            page = pdf[number]
            textpage = page.get_textpage()
            wanted = (cuts or {}).get(number)
            texts.append(_cut(textpage, wanted) if wanted else [textpage.get_text_bounded()])
            if not "".join(texts[-1]).strip() and not _inked(page):
                texts[-1] = []  # blank: no text and no image, not a scan
            textpage.close()
            page.close()
        return texts
    finally:
        pdf.close()


def _nothing_read(pages: int, scanned: int, contents: int) -> str:
    """Why no text came of a PDF's `pages`: `scanned` of them have ink but no text layer,
    `contents` are contents or index pages, the rest blank."""
    if scanned:
        return (
            f"{scanned} of its {pages} pages have no text layer (scanned?) and no other page "
            "has text: OCR it first, e.g. `ocrmypdf in.pdf out.pdf`, and index the result"
        )
    if contents:
        return f"its pages are blank or a table of contents ({contents}): no text to index"
    return f"all of its {pages} pages are blank"


def _inked(page: Any) -> bool:
    """Whether the page holds an image (what a scan is; lines and shapes alone are not)."""
    import pypdfium2.raw as pdfium_c

    found = page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=2)
    return next(iter(found), None) is not None


def _cut(textpage: Any, cuts: list[float]) -> list[str]:
    """The page's text split where its lines pass below each cut (reading order is taken as
    top to bottom; a line goes whole to the part its first character's middle stands in)."""
    count = textpage.count_chars()
    text = textpage.get_text_range(0, count)
    if len(text) != count:  # characters outside the BMP: offsets would not line up
        return [text] + [""] * len(cuts)
    parts, at = [], 0
    for cut in cuts:
        split = next(
            (
                i
                for i in range(at, count)
                if not text[i].isspace() and _middle(textpage.get_charbox(i)) < cut
            ),
            count,
        )
        split = text.rfind("\n", at, split) + 1 if split < count else count
        parts.append(text[at : max(at, split)])
        at = max(at, split)
    return [*parts, text[at:]]


def _middle(box: tuple[float, float, float, float]) -> float:
    return (box[1] + box[3]) / 2


def pypdf_facts(path: Path) -> tuple[str, list[str], list[Start]]:
    """The title, printed page labels (one per page; none where pypdf cannot read them) and the
    outline's bookmarks in page order (none likewise: the text still counts, only the labels
    and sections are lost)."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    title, labels = "", []
    starts: list[Start] = []
    try:
        reader = PdfReader(str(path), strict=False)
        if reader.is_encrypted:
            reader.decrypt("")
        meta = reader.metadata
        title = " ".join(str(meta.title).split()) if meta and meta.title else ""
        labels = list(reader.page_labels)
        _walk_outline(reader, reader.outline, (), starts)
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return title, labels, []
    return title, labels, sorted(starts, key=lambda s: (s[0], -(s[1] if s[1] is not None else 1e9)))


def mid_page(starts: list[Start]) -> dict[int, list[Start]]:
    """Each page's bookmarks that point below its top, highest first."""
    inside: dict[int, list[Start]] = {}
    for start in starts:
        if start[1] is not None:
            inside.setdefault(start[0], []).append(start)
    return inside


def sections_at(starts: list[Start], pages: int) -> list[Section]:
    """The section in force at each page's top: the last bookmark before it, or one pointing
    at its top."""
    at_top: list[Section] = []
    current: Section = ()
    by_page: dict[int, list[Start]] = {}
    for start in starts:
        by_page.setdefault(start[0], []).append(start)
    for page in range(pages):
        marks = by_page.get(page, [])
        for start in (m for m in marks if m[1] is None):
            current = start[2]
        at_top.append(current)
        below = [m for m in marks if m[1] is not None]
        if below:
            current = below[-1][2]
    return at_top


def _walk_outline(reader: Any, items: list[Any], parent: Section, out: list[Start]) -> None:
    last: Section = parent
    for item in items:
        if isinstance(item, list):
            _walk_outline(reader, item, last, out)
            continue
        title = " ".join(str(getattr(item, "title", "") or "").split())
        page = reader.get_destination_page_number(item)
        if title and page is not None and page >= 0:
            last = (*parent, title)
            out.append((page, _top(item), last))


def _top(item: Any) -> float | None:
    """Where a bookmark points on its page (None: the page's top, or not said)."""
    try:
        top = item.top
        return float(top) if top is not None else None
    except (AttributeError, TypeError, ValueError):
        return None


def paragraphs(lines: list[str], page: list[str] | None = None) -> str:
    """A page's lines joined into blocks. A line broken because the next word did not fit is
    wrapped prose, joined to the next (a word hyphenated at a line end rejoined); a line
    broken with room left for the next word ends its paragraph. Paragraphs of one line in a
    row (table rows, list items, a heading) stay a line each, in one block: a table keeps a row
    per line and a heading does not run into the paragraph under it. A full line's width is
    measured on the whole `page` (default: `lines`) when `lines` are part of one."""
    if not lines:
        return ""
    widths = sorted(len(line) for line in page or lines)
    room = FULL_LINE * widths[len(widths) * 9 // 10]
    blocks: list[str] = []
    current: list[str] = []
    rows: list[str] = []
    for n, line in enumerate(lines):
        current.append(line)
        following = lines[n + 1].split()[0] if n + 1 < len(lines) else ""
        if following and len(line) + 1 + len(following) > room:
            continue  # wrapped: the next word did not fit
        if len(current) == 1:
            rows.append(line)
        else:
            if rows:
                blocks.append("\n".join(rows))
                rows = []
            blocks.append(_joined(current))
        current = []
    if rows:
        blocks.append("\n".join(rows))
    return "\n\n".join(blocks)


def _joined(lines: list[str]) -> str:
    text = lines[0]
    for line in lines[1:]:
        text = text[:-1] + line if text.endswith("-") and line[:1].islower() else f"{text} {line}"
    return text


class PdfConverter:
    name: ClassVar[str] = "pdf"
    # 3: short lines (headings, list items, table rows) kept apart; 4: sections by position;
    # 5: chapters' running headers and contents and index entries left out, blank pages told;
    # 6: chapters' headers without the page's number and chapters' own contents lists left
    # out; TeX's accents composed with their letters ("M¨oller" is "Möller")
    version: ClassVar[str] = "6"
    suffixes: ClassVar[tuple[str, ...]] = (".pdf",)
    max_mb: ClassVar[int] = 500  # larger files are skipped, never read
    isolated: ClassVar[bool] = True

    def convert(self, path: Path, settings: ConvertSettings) -> Converted:
        check_streams(path)
        with _said_by("pypdf") as said:  # its warnings become notes, not lines on stderr
            title, labels, starts = pypdf_facts(path)
        inside = mid_page(starts)
        cuts = {page: [m[1] or 0.0 for m in marks] for page, marks in inside.items()}
        parts = page_texts(path, cuts)
        if not parts:
            raise ConversionFailed("the PDF has no pages")
        at_top = sections_at(starts, len(parts))
        if len(labels) != len(parts):
            labels = [""] * len(parts)
        read = [_lines("\n".join(p)) for p in parts]
        pages = strip_furniture(read)
        headed = sum(len(a) != len(b) for a, b in zip(read, pages, strict=True))
        units, empty, contents = [], 0, 0
        for number, lines in enumerate(pages):
            left = without_contents(lines, len(pages))
            if left is None:
                left = without_leaders(lines, len(pages))
            if left is not None:
                contents, lines = contents + 1, left
            elif not lines:
                empty += bool(parts[number])  # a blank page is not a scan
                continue
            kept = set(lines)  # furniture is judged on whole pages, then dropped from parts
            sections = [at_top[number], *(m[2] for m in inside.get(number, []))]
            for part, section in zip(parts[number], sections, strict=True):
                text = [line for line in _lines(part) if line in kept]
                if text:
                    units.append(
                        Unit(
                            paragraphs(text, lines),
                            Locator(page=number + 1, page_label=labels[number], section=section),
                        )
                    )
        if not units:
            raise ConversionFailed(_nothing_read(len(pages), empty, contents))
        notes = (
            [f"{empty} of {len(pages)} pages have no text (scanned?): OCR them first"]
            if empty
            else []
        )
        if headed:
            notes.append(f"page numbers, running headers or footers left out of {headed} pages")
        if contents:
            notes.append(f"{contents} pages of contents or index entries left out of the text")
        notes += [f"pypdf: {line}" for line in dict.fromkeys(said)][:5]
        return Converted(title, units, notes)


# PDFium marks a word hyphenated at a line's end with U+FFFE (U+0002 in some files): a hyphen
# there (rejoined with the next line's part), nothing elsewhere; other control characters go
_HYPHEN_MARKS = "\ufffe\x02"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffe\ufeff]")


# TeX sets an accent as a character of its own before its letter; PDFium reads "M¨oller"
_SPACING_ACCENTS = {
    "\u00a8": "\u0308",  # ¨ diaeresis
    "\u00b4": "\u0301",  # ´ acute
    "\u02c6": "\u0302",  # ˆ circumflex
    "\u02dc": "\u0303",  # ˜ tilde
    "\u00b8": "\u0327",  # ¸ cedilla
    "\u02c7": "\u030c",  # ˇ caron
    "\u02da": "\u030a",  # ˚ ring
    "\u02d8": "\u0306",  # ˘ breve
    "\u02dd": "\u030b",  # ˝ double acute
}
# an acute only over a vowel: "it´s" is an apostrophe mistyped, not an accented s
_OVER_ANY = "".join(a for a in _SPACING_ACCENTS if a != "\u00b4")
_ACCENTED = re.compile(f"([{_OVER_ANY}])([A-Za-z])|(\u00b4)([AEIOUYaeiouy])")


def _composed(found: re.Match[str]) -> str:
    """An accent and its letter as one character ("¨o" is "ö"); left as they are when no
    single character is both."""
    import unicodedata

    accent, letter = found.group(1) or found.group(3), found.group(2) or found.group(4)
    one = unicodedata.normalize("NFC", letter + _SPACING_ACCENTS[accent])
    return one if len(one) == 1 else found.group(0)


def _lines(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        line = " ".join(line.split())
        if line and line[-1] in _HYPHEN_MARKS:
            line = line[:-1] + "-"
        line = _ACCENTED.sub(_composed, _CONTROL.sub("", line))
        if line.strip():
            out.append(line)
    return out


@contextlib.contextmanager
def _said_by(name: str) -> Iterator[list[str]]:
    """What the logger `name` says of warning level or more, collected instead of printed."""
    said: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record.getMessage()[:200])

    logger, handler = logging.getLogger(name), Collect(logging.WARNING)
    propagate, logger.propagate = logger.propagate, False
    logger.addHandler(handler)
    try:
        yield said
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
