"""The source as it looks: a cited passage's PDF page rendered by PDFium with its lines
highlighted, for files of a served folder index only."""

from __future__ import annotations

import io
import os

import pytest

pytest.importorskip("fastapi")
from docfiles import make_folder  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from ragteam.llm import FakeModel  # noqa: E402
from ragteam.retrieval import sync_folder  # noqa: E402
from ragteam.retrieval.index import IndexSettings  # noqa: E402
from ragteam.server import ServerConfig, create_app  # noqa: E402


@pytest.fixture
def served(tmp_path):
    folder = make_folder(tmp_path / "docs")
    sync_folder(folder, tmp_path / "ix", index=IndexSettings(retriever="bm25"))
    config = ServerConfig(indexes={"docs": tmp_path / "ix"})
    with TestClient(create_app(config, FakeModel(lambda m, p: "x"))) as client:
        yield client, folder


def _marked(png: bytes, colour: tuple[int, int, int]) -> int:
    """Pixels of the page close to `colour` (a highlight over white paper)."""
    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=int)
    near = np.abs(pixels - np.array(colour)) < np.array([20, 30, 40])
    return int(near.all(axis=2).sum())


def test_a_pdf_passages_page_is_rendered_with_its_lines_highlighted(served):
    client, _folder = served
    plain = client.get("/v1/page/docs.png", params={"passage": "report.pdf#2"})
    assert plain.status_code == 200 and plain.headers["content-type"] == "image/png"
    assert plain.content.startswith(b"\x89PNG")
    marked = client.get(
        "/v1/page/docs.png", params={"passage": "report.pdf#2", "mark": "harbour master"}
    )
    lines = _marked(plain.content, (255, 240, 197))  # the passage's lines, light yellow
    words = _marked(marked.content, (255, 203, 90))  # the marked words, stronger
    assert lines > 500 and words > 200 and _marked(plain.content, (255, 203, 90)) < words / 4


def test_only_pdf_pages_of_files_as_synced_are_shown(served):
    client, folder = served
    other = client.get("/v1/page/docs.png", params={"passage": "notes.md#0"})
    assert other.status_code == 400 and "PDF page" in other.json()["detail"]
    missing = client.get("/v1/page/docs.png", params={"passage": "../../etc/passwd"})
    assert missing.status_code == 404
    unknown = client.get("/v1/page/nope.png", params={"passage": "report.pdf#2"})
    assert unknown.status_code == 404
    later = os.stat(folder / "report.pdf").st_mtime_ns + 10**9
    os.utime(folder / "report.pdf", ns=(later, later))
    changed = client.get("/v1/page/docs.png", params={"passage": "report.pdf#2"})
    assert changed.status_code == 400 and "sync it again" in changed.json()["detail"]
    assert str(folder) not in changed.text


def test_a_page_needs_the_servers_key(tmp_path):
    folder = make_folder(tmp_path / "docs")
    sync_folder(folder, tmp_path / "ix", index=IndexSettings(retriever="bm25"))
    config = ServerConfig(indexes={"docs": tmp_path / "ix"}, api_key="secret")
    with TestClient(create_app(config, FakeModel(lambda m, p: "x"))) as client:
        asked = {"passage": "report.pdf#2"}
        assert client.get("/v1/page/docs.png", params=asked).status_code == 401
        assert client.get("/v1/indexes/docs/documents").status_code == 401
        key = {"Authorization": "Bearer secret"}
        assert client.get("/v1/page/docs.png", params=asked, headers=key).status_code == 200


def test_a_huge_page_is_rendered_within_the_pixel_cap(tmp_path):
    """N-H4: a 2 KB PDF with a 14,400-point page took the server past 6 GB."""
    import pypdfium2 as pdfium
    from PIL import Image

    from ragteam.server.pages import MAX_PIXELS, render

    pdf = pdfium.PdfDocument.new()
    pdf.new_page(14_400, 14_400)
    pdf.save(str(tmp_path / "poster.pdf"))
    pdf.close()
    png = render(str(tmp_path / "poster.pdf"), 1, "", "")
    width, height = Image.open(io.BytesIO(png)).size
    assert width * height <= MAX_PIXELS and width > 1000


def test_a_page_renders_within_a_memory_budget_or_is_refused_with_413(tmp_path):
    """N-H4, the rest: rendering runs in a child with a memory limit, so a page that needs more
    fails alone with a clear 413 and the server goes on (it rendered in the server before)."""
    folder = make_folder(tmp_path / "docs")
    sync_folder(folder, tmp_path / "ix", index=IndexSettings(retriever="bm25"))
    config = ServerConfig(indexes={"docs": tmp_path / "ix"})
    with TestClient(create_app(config, FakeModel(lambda m, p: "x"))) as client:
        asked = {"passage": "report.pdf#2"}
        assert client.get("/v1/page/docs.png", params=asked).status_code == 200
    from ragteam.server import pages

    images = pages.PageImages(memory_mb=200)  # too little for PDFium to render a page
    try:
        with pytest.raises(pages.PageNotRendered, match="200 MB"):
            images.png(folder / "report.pdf", 2, "", "")
    finally:
        images.close()
