"""The source as it looks: a cited passage's PDF page rendered by PDFium, the passage's lines
highlighted from PDFium's character boxes (and the words that back the answer marked more
strongly). Only pages of files inside a served folder index are rendered; a file changed since
the sync is refused (its page may no longer hold the passage). PDFium renders in a child process
(documents/isolated.py) within RENDER_SECONDS and RENDER_MB: a hostile page fails alone, with a
413, and the server's memory is never its to take."""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import Response

from ragteam.documents.base import ConversionFailed
from ragteam.documents.isolated import Isolated
from ragteam.errors import InputError, UnknownName
from ragteam.server.service import Service
from ragteam.types import Passage

SCALE = 1.6  # pixels per PDF point: a 595-point A4 page is 952 pixels wide
# pixels of a rendered page at most (about 16 MB in RGBA): a larger page (a poster, or a
# hostile 14,400-point one) is rendered at the scale that fits, never at its own size
MAX_PIXELS = 4_000_000
RENDER_SECONDS = 30.0  # a page's render at most (a real manual's page takes about 0.1 s)
RENDER_MB = 1024  # the render child's address space (a page at the pixel cap needs ~200 MB)
MAX_MARK = 400  # characters of `mark` searched for
PASSAGE = (255, 229, 138, 110)  # the passage's lines (RGBA)
WORDS = (255, 170, 0, 150)  # the words marked (the evidence sentence or span)


class PageNotRendered(InputError):
    """A page that could not be rendered within the render budgets (413)."""


class PageImages:
    """Rendered pages, made in a child process within the budgets, the last 32 kept."""

    def __init__(self, seconds: float = RENDER_SECONDS, memory_mb: int = RENDER_MB) -> None:
        self.child = Isolated(seconds, memory_mb)
        self.lock = threading.Lock()  # one child, one render at a time
        self.kept: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()

    def png(self, path: Path, page_number: int, text: str, mark: str) -> bytes:
        key = (str(path), path.stat().st_mtime_ns, page_number, text, mark)
        with self.lock:
            if key in self.kept:
                self.kept.move_to_end(key)
                return self.kept[key]
            try:
                png = self.child.call(
                    f"{__name__}:render", (str(path), page_number, text, mark), "rendering"
                )
            except ConversionFailed as exc:
                raise PageNotRendered(
                    f"page {page_number} could not be rendered within {self.child.seconds:g} s "
                    f"and {self.child.memory_mb} MB ({exc}): open the passage's text instead"
                ) from None
            self.kept[key] = png
            if len(self.kept) > 32:
                self.kept.popitem(last=False)
            return png  # type: ignore[no-any-return]

    def close(self) -> None:
        self.child.close()


def add_page_routes(app: FastAPI, service: Service, auth: list[Any]) -> None:
    images = PageImages()
    app.router.on_shutdown.append(images.close)

    @app.get("/v1/page/{index}.png", dependencies=auth)
    def page_png(index: str, passage: str, mark: str = "") -> Response:
        """The PDF page a passage stands on, as PNG, its lines highlighted (`mark`: words to
        mark more strongly, e.g. the evidence sentence)."""
        loaded = service.index(index)
        found = loaded.passage(passage) if loaded else None
        if found is None:
            raise UnknownName("passage", passage, [])
        path = source_file(service, index, found)
        png = images.png(path, found.locator.page, found.text, mark[:MAX_MARK])
        return Response(png, media_type="image/png", headers={"Cache-Control": "no-store"})


def source_file(service: Service, index: str, passage: Passage) -> Path:
    """The PDF file the passage came from, inside the index's folder and as it was synced."""
    from ragteam.retrieval.sources import read_sources

    where = passage.locator
    if where is None or where.page is None or not where.source.lower().endswith(".pdf"):
        raise InputError("this passage does not stand on a PDF page: open its text instead")
    manifest = service.manifest(index)
    if not manifest.source.is_folder:
        raise InputError("this index was not synced from a folder: it has no pages to show")
    folder = Path(manifest.source.path).resolve()
    path = (folder / where.source).resolve()
    if not path.is_relative_to(folder) or not path.is_file():
        raise InputError(f"{where.source} is not in the indexed folder any more: sync the index")
    sources, _ = read_sources(service.config.indexes[index])
    known = sources.get(where.source)
    stat = path.stat()
    if known is None or (known.size, known.mtime_ns) != (stat.st_size, stat.st_mtime_ns):
        raise InputError(f"{where.source} changed since the index was synced: sync it again")
    return path


def render(path: str, page_number: int, text: str, mark: str) -> bytes:
    """The page as PNG with the passage's lines and `mark` highlighted (run in the render
    child: `PageImages`)."""
    import pypdfium2 as pdfium
    from PIL import Image, ImageDraw

    pdf = pdfium.PdfDocument(path)
    try:
        if not 1 <= page_number <= len(pdf):
            raise InputError(f"page {page_number} is not in the file ({len(pdf)} pages)")
        page = pdf[page_number - 1]
        width, height = page.get_width(), page.get_height()
        scale = page_scale(width, height)
        image = page.render(scale=scale).to_pil().convert("RGBA")
        textpage = page.get_textpage()
        lines = [line.strip() for line in text.splitlines() if len(line.strip()) >= 6]
        layer = Image.new("RGBA", image.size, (0, 0, 0, 0))
        draw = ImageDraw.Draw(layer)
        for needle, colour in [*((line, PASSAGE) for line in lines), (mark.strip(), WORDS)]:
            for left, bottom, right, top in _boxes(textpage, needle):
                box = (
                    left * scale,
                    (height - top) * scale,
                    right * scale,
                    (height - bottom) * scale,
                )
                draw.rectangle(box, fill=colour)
        out = io.BytesIO()
        Image.alpha_composite(image, layer).convert("RGB").save(out, "PNG", optimize=True)
        return out.getvalue()
    finally:
        pdf.close()


def page_scale(width: float, height: float) -> float:
    """Pixels per point for a page of `width` x `height` points: SCALE, or less so that the
    image holds at most MAX_PIXELS."""
    area = max(1.0, width * SCALE) * max(1.0, height * SCALE)
    return SCALE if area <= MAX_PIXELS else SCALE * (MAX_PIXELS / area) ** 0.5


def _boxes(textpage: Any, needle: str) -> list[tuple[float, float, float, float]]:
    """The rectangles of every place `needle` stands on the page (case-insensitive); a long
    needle that is not found whole is looked for by its first and last 60 characters."""
    if len(needle) < 3:
        return []
    tries = [needle] if len(needle) <= 120 else [needle, needle[:60], needle[-60:]]
    for wanted in tries:
        found = []
        searcher = textpage.search(wanted, match_case=False)
        while (hit := searcher.get_next()) is not None:
            start, count = hit
            found += [textpage.get_rect(i) for i in range(textpage.count_rects(start, count))]
        if found:
            return found
    return []
