"""Word (python-docx) and PowerPoint (python-pptx) files. DOCX: the body in order (paragraphs
and tables), heading styles give the section path, tables become `cell | cell` rows, rendered
and explicit page breaks give an approximate page. PPTX: one unit per slide (its number is the
locator), its title as heading, then text frames, tables and speaker notes."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any, ClassVar

from ragteam.documents.base import ConversionFailed, Converted, ConvertSettings, Unit
from ragteam.documents.tables import table_lines
from ragteam.locator import Locator

MAX_UNZIPPED = 512 * 1024 * 1024  # a .docx/.pptx that unpacks to more is refused (zip bomb)
# One XML part (a document body, a slide) is parsed whole, at about 18 times its size (the
# 2026-11-26 probe: a 200 MiB slide peaked at 3.6 GB; a 60 MiB one 1.1 GB and 112 s,
# bench/hostile_sync.py); a long book's body is tens of MiB, a real slide well under one.
MAX_XML_PART = 64 * 1024 * 1024
MAX_SLIDE_PART = 16 * 1024 * 1024  # ppt/slides/*.xml and ppt/notesSlides/*.xml


def check_zip(path: Path, kind: str) -> None:
    """Office files are zip packages: refuse one that is not, or that unpacks to too much."""
    try:
        with zipfile.ZipFile(path) as package:
            parts = package.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise ConversionFailed(
            f"not a {kind} file (not a zip package: {exc}); save it again from its program"
        ) from exc
    total = sum(info.file_size for info in parts)
    for part in parts:
        cap = _part_cap(part.filename)
        if part.filename.endswith(".xml") and part.file_size > cap:
            raise ConversionFailed(
                f"its part {part.filename} unpacks to {part.file_size / 2**20:.0f} MiB (over "
                f"{cap // 2**20} MiB; no real document part is that large): refused as a "
                "possible zip bomb"
            )
    if total > MAX_UNZIPPED:
        raise ConversionFailed(
            f"unpacks to {total / 2**20:.0f} MiB (over {MAX_UNZIPPED // 2**20} MiB): refused "
            "as a possible zip bomb"
        )


def _part_cap(name: str) -> int:
    slide = name.startswith(("ppt/slides/", "ppt/notesSlides/"))
    return MAX_SLIDE_PART if slide else MAX_XML_PART


def _heading_level(style_name: str) -> int | None:
    name = style_name.lower()
    if name == "title":
        return 0
    if name.startswith("heading"):
        rest = name[len("heading") :].strip()
        return int(rest) if rest.isdigit() else 1
    return None


class _Pages:
    """Units split at each heading and each page break, with the section path kept."""

    def __init__(self) -> None:
        self.page = 1
        self.path: list[tuple[int, str]] = []
        self.blocks: list[str] = []
        self.units: list[Unit] = []

    def flush(self) -> None:
        if self.blocks:
            section = tuple(t for _, t in self.path)
            self.units.append(
                Unit("\n\n".join(self.blocks), Locator(page=self.page, section=section))
            )
        self.blocks = []

    def heading(self, level: int, text: str) -> None:
        self.flush()
        while self.path and self.path[-1][0] >= level:
            self.path.pop()
        self.path.append((level, text))

    def new_page(self) -> None:
        self.flush()
        self.page += 1


def _paragraph_breaks(paragraph: Any) -> int:
    """Page breaks inside a paragraph: Word's rendered ones, else explicit `w:br type=page`."""
    from docx.oxml.ns import qn

    rendered = len(paragraph._p.findall(".//" + qn("w:lastRenderedPageBreak")))
    if rendered:
        return rendered
    return sum(1 for br in paragraph._p.iter(qn("w:br")) if br.get(qn("w:type")) == "page")


class DocxConverter:
    name: ClassVar[str] = "docx"
    version: ClassVar[str] = "3"  # 2-3: tables as records by their header row, when asked
    suffixes: ClassVar[tuple[str, ...]] = (".docx",)
    max_mb: ClassVar[int] = 200  # larger files are skipped, never read
    isolated: ClassVar[bool] = True

    def convert(self, path: Path, settings: ConvertSettings) -> Converted:
        import docx
        from docx.table import Table
        from docx.text.paragraph import Paragraph

        check_zip(path, "Word (.docx)")
        try:
            document = docx.Document(str(path))
        except Exception as exc:  # python-docx raises many kinds on broken packages
            raise ConversionFailed(f"not a readable .docx ({exc})") from exc
        pages = _Pages()
        title = (document.core_properties.title or "").strip()
        style_name = _style_names(document)
        for element in document.element.body.iterchildren():
            tag = element.tag.rsplit("}", 1)[-1]
            if tag == "p":
                paragraph = Paragraph(element, document)
                for _ in range(_paragraph_breaks(paragraph)):
                    pages.new_page()
                text = " ".join(paragraph.text.split())
                level = _heading_level(style_name(element.style))
                if text and level is not None:
                    title = title or (text if level <= 1 else "")
                    pages.heading(level, text)
                elif text:
                    pages.blocks.append(text)
            elif tag == "tbl":
                table = Table(element, document)
                pages.blocks.append(_table_rows(table, settings.records and _docx_headed(table)))
        pages.flush()
        return Converted(title, pages.units)


def _style_names(document: Any) -> Any:
    """Style id -> style name, read once (python-docx's `paragraph.style` scans every style
    of the document for every paragraph: 96% of the time of a long document); None (no
    style set) -> the default paragraph style's name."""
    from docx.enum.style import WD_STYLE_TYPE

    names = {s.style_id: s.name or "" for s in document.styles}
    default = document.styles.default(WD_STYLE_TYPE.PARAGRAPH)
    fallback = default.name if default is not None else ""
    return lambda style_id: names.get(style_id, fallback) if style_id else fallback


def _table_rows(table: Any, headed: bool) -> str:
    """A .docx or .pptx table's rows, a line each (`cell | cell`): records by the first row's
    names when `headed` (`--tables records` and a header row); merged cells (which repeat
    their text) once."""
    rows = []
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            text = " ".join(cell.text.split())
            if not cells or cells[-1] != text:  # merged cells repeat their text
                cells.append(text)
        rows.append(cells)
    if headed and len(rows) > 1:
        return "\n".join(table_lines(rows[0], rows[1:]))
    return "\n".join(" | ".join(cells) for cells in rows if any(cells))


def _docx_headed(table: Any) -> bool:
    """Whether a Word table's first row is its header: marked to repeat as a header row, or
    styled as one by the table's look (Word's default for its table styles)."""
    from docx.oxml.ns import qn

    first = table._tbl.find(qn("w:tr"))
    if first is not None and first.find(f"{qn('w:trPr')}/{qn('w:tblHeader')}") is not None:
        return True
    look = table._tbl.find(f"{qn('w:tblPr')}/{qn('w:tblLook')}")
    if look is None:
        return False
    flag = look.get(qn("w:firstRow"))
    if flag is not None:
        return flag in ("1", "true", "on")
    value = look.get(qn("w:val"))  # the older hexadecimal form: 0x0020 is the first row
    return value is not None and bool(int(value, 16) & 0x20)


MAX_TITLE = 120  # characters: a longer "title" is a slide's body typed in its title box


class PptxConverter:
    name: ClassVar[str] = "pptx"
    version: ClassVar[str] = (
        "4"  # 3-4: tables as records when asked; a body typed in the title box kept
    )
    suffixes: ClassVar[tuple[str, ...]] = (".pptx",)
    max_mb: ClassVar[int] = 200  # larger files are skipped, never read
    isolated: ClassVar[bool] = True

    def convert(self, path: Path, settings: ConvertSettings) -> Converted:
        from pptx import Presentation

        check_zip(path, "PowerPoint (.pptx)")
        try:
            deck = Presentation(str(path))
        except Exception as exc:  # python-pptx raises many kinds on broken packages
            raise ConversionFailed(f"not a readable .pptx ({exc})") from exc
        units = []
        for number, slide in enumerate(deck.slides, start=1):
            heading, blocks = _slide_text(slide, settings.records)
            if slide.has_notes_slide:
                notes = " ".join(slide.notes_slide.notes_text_frame.text.split())
                if notes:
                    blocks.append(f"Notes: {notes}")
            if heading or blocks:
                text = "\n\n".join(blocks) if blocks else heading
                units.append(
                    Unit(text, Locator(slide=number, section=(heading,) if heading else ()))
                )
        title = (deck.core_properties.title or "").strip()
        if not title and units and units[0].where.section:
            title = units[0].where.section[0]
        return Converted(title, units)


def _slide_text(slide: Any, records: bool = False) -> tuple[str, list[str]]:
    """The slide's heading and its blocks in reading order. A title placeholder holding more
    than a title (several lines, or a paragraph: a slide whose author typed its body there)
    gives its first line as the heading and the rest as the body's first block."""
    title_shape = slide.shapes.title
    said = title_shape.text_frame.text if title_shape is not None else ""
    lines = [" ".join(line.split()) for line in said.splitlines() if line.strip()]
    heading = lines[0] if lines else ""
    body = lines[1:]
    if len(heading) > MAX_TITLE:
        heading, body = "", lines
    pieces: list[tuple[int, int, int, list[str]]] = []  # top, left, height, paragraphs
    for shape in slide.shapes:
        if title_shape is not None and shape.shape_id == title_shape.shape_id:
            continue
        paragraphs: list[str] = []
        if shape.has_text_frame:
            for paragraph in shape.text_frame.paragraphs:
                text = " ".join("".join(run.text for run in paragraph.runs).split())
                if text:
                    paragraphs.append(text)
        elif getattr(shape, "has_table", False) and shape.has_table:
            paragraphs.append(_table_rows(shape.table, records and bool(shape.table.first_row)))
        if paragraphs:
            pieces.append((shape.top or 0, shape.left or 0, shape.height or 0, paragraphs))
    blocks = _reading_order(pieces)
    return heading, ["\n".join(body), *blocks] if body else blocks


def _reading_order(pieces: list[tuple[int, int, int, list[str]]]) -> list[str]:
    """Shapes top to bottom (the file keeps them in drawing order, not reading order); one-line
    shapes that share a line — a table row or a sentence that a PDF-made or hand-placed slide
    split into boxes — joined left to right into one line."""
    blocks: list[str] = []
    row: list[tuple[int, str]] = []
    row_top = row_height = 0

    def flush() -> None:
        if row:
            blocks.append(" ".join(text for _, text in sorted(row)))
            row.clear()

    for top, left, height, paragraphs in sorted(pieces, key=lambda p: (p[0], p[1])):
        if len(paragraphs) > 1 or "\n" in paragraphs[0]:
            flush()
            blocks.extend(paragraphs)
            continue
        if row and abs(top - row_top) > max(row_height, height) / 2:
            flush()
        if not row:
            row_top, row_height = top, height
        row.append((left, paragraphs[0]))
    flush()
    return blocks
