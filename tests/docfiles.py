"""Real document files made by the libraries that write them: PDFs by reportlab (with page
labels, an outline and encryption added by pypdf), Word files by python-docx, slide decks by
python-pptx, web pages as HTML text. Each holds facts the tests ask about."""

from __future__ import annotations

from pathlib import Path

PDF_PAGES = [
    ("Introduction", "The Tarrin Bridge was designed by Mira Okafor in 1871."),
    ("Budget", "The budget for the new harbour is four million crowns."),
    ("Staff", "The harbour master is Jonas Quell, appointed in 1902."),
    ("Appendix", "Tide tables are kept in the town hall of Ostra."),
]


def make_pdf(
    path: Path,
    pages: list[tuple[str, str]] = PDF_PAGES,
    *,
    header: bool = True,
    blank: int = 0,
    scanned: int = 0,
    password: str = "",
) -> Path:
    """A text PDF: a running header and a page-number footer on every page, roman page labels
    on the first two pages, then arabic from 1, and an outline entry per page; then `blank`
    pages with nothing on them and `scanned` pages holding only an image."""
    from pypdf import PdfReader, PdfWriter
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    raw = path.with_suffix(".raw.pdf")
    pdf = canvas.Canvas(str(raw), pagesize=A4)
    for number, (heading, text) in enumerate(pages, start=1):
        if header:
            pdf.drawString(72, 800, "ACME Harbour Authority - Annual Report 2024")
        pdf.drawString(72, 760, heading)
        pdf.drawString(72, 740, text)
        pdf.drawString(72, 40, f"Page {number} of {len(pages)}")
        pdf.showPage()
    for _ in range(blank):
        pdf.showPage()
    for _ in range(scanned):
        from PIL import Image
        from reportlab.lib.utils import ImageReader

        pdf.drawImage(ImageReader(Image.new("L", (60, 80), 200)), 72, 400, 300, 400)
        pdf.showPage()
    pdf.save()
    writer = PdfWriter()
    writer.append(PdfReader(str(raw)))
    raw.unlink()
    total = len(pages) + blank + scanned
    if total >= 2:
        writer.set_page_label(0, 1, "/r")
    if total > 2:
        writer.set_page_label(2, total - 1, "/D", start=1)
    for number, (heading, _text) in enumerate(pages, start=1):
        writer.add_outline_item(title=f"{number} {heading}", page_number=number - 1)
    writer.add_metadata({"/Title": "Harbour Annual Report"})
    if password:
        writer.encrypt(user_password=password, owner_password=password)
    with path.open("wb") as handle:
        writer.write(handle)
    return path


def make_docx(path: Path) -> Path:
    import docx

    document = docx.Document()
    document.core_properties.title = "Pump Specification"
    document.add_heading("Overview", 1)
    document.add_paragraph("The pump runs at forty litres per minute.")
    document.add_heading("Limits", 2)
    document.add_paragraph("Never run the pump above ninety degrees.")
    table = document.add_table(rows=2, cols=2)
    for (row, col), text in {
        (0, 0): "Part",
        (0, 1): "Pressure",
        (1, 0): "Valve",
        (1, 1): "12 bar",
    }.items():
        table.cell(row, col).text = text
    document.add_page_break()
    document.add_heading("Maintenance", 1)
    document.add_paragraph("Oil the valve every spring with lanolin.")
    document.save(str(path))
    return path


def make_pptx(path: Path) -> Path:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slides = [
        ("Roadmap", "The product launches in March.", "Mention the budget freeze."),
        ("Team", "Four engineers join in May.", ""),
        ("Prices", "", ""),
    ]
    for title, body, notes in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[5 if not body else 1])
        slide.shapes.title.text = title
        if body:
            slide.placeholders[1].text = body
        else:
            table = slide.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1)).table
            for (row, col), text in {
                (0, 0): "Plan",
                (0, 1): "Price",
                (1, 0): "Basic",
                (1, 1): "9 crowns",
            }.items():
                table.cell(row, col).text = text
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    deck.save(str(path))
    return path


HTML = """<!doctype html><html><head><title>Ferry times</title></head><body>
<nav><a href="/">Home</a> | <a href="/about">About us</a> | <a href="/shop">Shop</a></nav>
<main><article><h1>Ferry times</h1>
<p>The first ferry to Ostra leaves at 06:40 every weekday from pier 3, and the crossing
takes forty minutes in calm weather.</p>
<h2>Fares</h2>
<table><tr><th>Ticket</th><th>Price</th></tr><tr><td>Adult</td><td>4 crowns</td></tr></table>
<p>Children under five travel free of charge on all routes of the island ferry.</p>
</article></main>
<footer>Copyright 2024 Island Ferries. Cookie settings. Privacy.</footer></body></html>"""


def make_html(path: Path) -> Path:
    path.write_text(HTML, encoding="utf-8")
    return path


MARKDOWN = """---
title: Field notes
---
# Field notes

## Birds

We saw **twelve** puffins on *Korr* and [a heron](https://example.org/heron).

| Day | Count |
|-----|-------|
| Mon | 5     |

## Weather

Fog rolled in after noon.
"""


def make_folder(root: Path) -> Path:
    """One of each format, plus an upper-case .TXT and a file no converter reads."""
    root.mkdir(parents=True, exist_ok=True)
    make_pdf(root / "report.pdf")
    make_docx(root / "spec.docx")
    make_pptx(root / "deck.pptx")
    make_html(root / "ferry.html")
    (root / "notes.md").write_text(MARKDOWN, encoding="utf-8")
    (root / "MEETING.TXT").write_text("The board approved the lighthouse repair on Tuesday.")
    (root / "guide.rst").write_text(
        "Guide\n=====\n\nIntro with ``code`` and **bold** words.\n\nSetup\n-----\n\n"
        "Run the installer twice before lunch.\n"
    )
    (root / "photo.heic").write_bytes(b"\x00not a document")
    return root
