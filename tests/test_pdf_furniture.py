"""Chapters' running headers and contents lists out of a PDF's passages, in the three layouts
real manuals print them (issue 87): each test's PDF is written by reportlab the way the
Debian FAQ (LaTeX), the Nettle manual (Texinfo) and the bzip2 manual (DocBook) lay out their
pages, with the lines that look like furniture and are not beside them."""

from __future__ import annotations

from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from ragteam.documents import ConvertSettings, converter_for

BODY = [
    "The ferry to {0} leaves the north pier at seven and returns by noon on weekdays.",
    "Tickets for {0} are sold on board; children under twelve travel free of charge.",
    "Storms close the {0} route a few days each winter, announced at the harbour office.",
]


def _write(path, pages):
    """One PDF page per list of (height, text) lines."""
    pdf = canvas.Canvas(str(path), pagesize=A4)
    for lines in pages:
        for y, text in lines:
            pdf.drawString(72, y, text)
        pdf.showPage()
    pdf.save()
    return path


def _body(place, top=700):
    return [(top - 20 * n, line.format(place)) for n, line in enumerate(BODY)]


def _text(path):
    converted = converter_for(path).convert(path, ConvertSettings())
    return "\n".join(u.text for u in converted.units), converted


def test_a_latex_header_naming_chapter_and_section_leaves_every_page(tmp_path):
    """'CHAPTER 2. FERRIES… 2.3. WINTER…' over each page (the number at the foot): left out;
    a chapter's own opening 'Chapter 3' heading and the body under both stay."""
    places = ["Ostra", "Vell", "Marn", "Tessa", "Lund", "Brae", "Kell", "Dorn"]
    pages = []
    for n, place in enumerate(places, start=1):
        chapter = (n + 1) // 2
        top = [
            (800, f"CHAPTER {chapter}. FERRIES OF THE… {chapter}.{n}. ROUTE TO {place.upper()}…")
        ]
        if n in (1, 5):
            top = [
                (800, f"Chapter {chapter}"),
                (780, f"Ferries of the {'north' if n == 1 else 'south'}"),
            ]
        pages.append([*top, *_body(place), (40, str(n))])
    text, _ = _text(_write(tmp_path / "faq.pdf", pages))
    assert "CHAPTER" not in text and "ROUTE TO" not in text
    assert "Chapter 1" in text and "Ferries of the south" in text
    assert all(f"ferry to {p} leaves" in text for p in places)


def test_texinfo_headers_of_short_chapters_leave_the_text(tmp_path):
    """'Chapter 4: Example 5': a chapter's name and the page's printed number over each page,
    chapters of one page among long ones; a body line that ends in a number stays."""
    chapters = [("Introduction", 1), ("Copyright", 1), ("Reference", 5), ("Linking", 1)]
    pages, printed = [[(700, "Nettle-like manual"), (680, "This manual is for a harbour.")]], 1
    for number, (title, length) in enumerate(chapters, start=1):
        for k in range(length):
            place = f"{title} {k}"
            lines = [(800, f"Chapter {number}: {title} {printed}"), *_body(place)]
            lines.append((600, f"See table {printed} for the fares of {place}."))
            pages.append(lines)
            printed += 1
    text, converted = _text(_write(tmp_path / "nettle.pdf", pages))
    assert "Chapter" not in text
    assert "See table 1 for the fares of Introduction 0." in text
    assert [u.where.page for u in converted.units] == list(range(1, len(pages) + 1))


def test_docbook_chapter_contents_and_title_headers_leave_the_text(tmp_path):
    """A chapter opens with its title, 'Table of Contents' and dotted-leader entries (one
    wrapped onto two lines), then prose; its later pages carry the title alone on top. A
    table whose header row repeats on each page's top stays, rows and header."""
    entries = ["2.1. NAME", "2.2. SYNOPSIS", "2.3. OPTIONS"]
    opening = [(800, "2. How to use ferries"), (780, "Table of Contents")]
    opening += [
        (760 - 20 * n, f"{e} . . . . . . . . . . . . . . {n + 2}") for n, e in enumerate(entries)
    ]
    opening += [
        (700, "2.4. Recovering tickets lost on a long"),
        (680, "crossing . . . . . . . . . 5"),
    ]
    opening += [*_body("Ostra", 640), (40, "2")]
    pages = [[(800, "1. Introduction"), *_body("Vell"), (40, "1")], opening]
    for n, place in enumerate(["Marn", "Tessa", "Lund"], start=3):
        pages.append([(800, "How to use ferries"), *_body(place), (40, str(n))])
    for n, place in enumerate(["Brae", "Kell", "Dorn"], start=6):
        rows = [(780, "Port Fare Minutes"), (760, f"{place} 12 45"), (740, f"{place}-East 14 50")]
        pages.append([*rows, *_body(place), (40, str(n))])
    text, converted = _text(_write(tmp_path / "bzip.pdf", pages))
    assert ". . ." not in text and "Table of Contents" not in text and "crossing" not in text
    assert "How to use ferries\n" not in text.replace("2. How to use ferries\n", "")
    assert "2. How to use ferries" in text
    assert text.count("Port Fare Minutes") == 3 and "Dorn-East 14 50" in text
    assert all(f"ferry to {p} leaves" in text for p in ["Ostra", "Marn", "Lund", "Dorn"])
    assert any("1 pages of contents" in n for n in converted.notes)


def test_tex_accents_set_apart_are_read_with_their_letters(tmp_path):
    """TeX sets an accent as a character of its own before its letter, and PDFium reads it so
    ("M¨oller"): the two are read as one letter; an acute mistyped for an apostrophe stays."""
    lines = [
        "Sch\u00a8afer and M\u00a8oller met at the caf\u00b4e on the fa\u00b8cade side.",
        "The r\u02c6ole of the se\u02dcnor: it\u00b4s in the index.",
    ]
    path = _write(tmp_path / "tex.pdf", [[(700 - 20 * n, t) for n, t in enumerate(lines)]])
    text, _ = _text(path)
    assert "Schäfer and Möller met at the café on the façade side." in text
    assert "rôle of the señor: it\u00b4s in the index" in text
