"""Converters on real files: PDF (page labels, outline, running headers removed, scanned and
encrypted pages), DOCX (headings, tables, page breaks), PPTX (slides, tables, notes), HTML
(main content vs the whole page), Markdown, reStructuredText and text; and the chunker."""

from __future__ import annotations

import zipfile

import pytest
from docfiles import make_docx, make_html, make_pdf, make_pptx

from ragteam.documents import ConversionFailed, ConvertSettings, Unit, converter_for
from ragteam.documents.chunking import chunk
from ragteam.documents.text import markdown_units, rst_units
from ragteam.locator import Locator

SETTINGS = ConvertSettings()


def convert(path, settings=SETTINGS):
    converter = converter_for(path)
    assert converter is not None, path
    return converter.convert(path, settings)


def test_pdf_pages_labels_outline_and_no_running_furniture(tmp_path):
    doc = convert(make_pdf(tmp_path / "report.pdf"))
    assert doc.title == "Harbour Annual Report"
    assert [u.where.page for u in doc.units] == [1, 2, 3, 4]
    assert [u.where.page_label for u in doc.units] == ["i", "ii", "1", "2"]
    assert doc.units[1].where.section == ("2 Budget",)
    assert "four million crowns" in doc.units[1].text
    text = " ".join(u.text for u in doc.units)
    assert "ACME Harbour Authority" not in text and "Page 2 of 4" not in text


def test_pdf_scanned_pages_are_counted_blank_ones_are_not_and_a_textless_pdf_fails(tmp_path):
    doc = convert(make_pdf(tmp_path / "mixed.pdf", blank=1, scanned=2))
    assert len(doc.units) == 4 and "2 of 7 pages have no text" in doc.notes[0]
    assert not any("no text" in n for n in convert(make_pdf(tmp_path / "b.pdf", blank=2)).notes)
    with pytest.raises(ConversionFailed, match="OCR"):
        convert(make_pdf(tmp_path / "scan.pdf", pages=[], blank=1, scanned=2))
    with pytest.raises(ConversionFailed, match="all of its 3 pages are blank"):
        convert(make_pdf(tmp_path / "empty.pdf", pages=[], blank=3))


def test_pdf_encrypted_corrupt_and_truncated(tmp_path):
    with pytest.raises(ConversionFailed, match="password"):
        convert(make_pdf(tmp_path / "locked.pdf", password="s3cret"))
    data = make_pdf(tmp_path / "whole.pdf").read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[: len(data) // 2])  # a download that stopped half-way
    junk = tmp_path / "junk.pdf"
    junk.write_bytes(b"%PDF-1.7 this is not really a pdf")
    for bad in (cut, junk):
        with pytest.raises(ConversionFailed, match="not a readable PDF.*is it complete"):
            convert(bad)


def test_docx_headings_tables_and_page_breaks(tmp_path):
    doc = convert(make_docx(tmp_path / "spec.docx"))
    assert doc.title == "Pump Specification"
    by_section = {u.where.section: u for u in doc.units}
    assert "forty litres" in by_section[("Overview",)].text
    limits = by_section[("Overview", "Limits")]
    assert "Valve | 12 bar" in limits.text and limits.where.page == 1
    assert by_section[("Maintenance",)].where.page == 2


def test_docx_that_is_not_a_zip_or_is_a_zip_bomb(tmp_path, monkeypatch):
    fake = tmp_path / "fake.docx"
    fake.write_text("just text")
    with pytest.raises(ConversionFailed, match="not a zip"):
        convert(fake)
    bomb = tmp_path / "bomb.docx"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("word/document.xml", b"\0" * (3 * 2**20))
    import ragteam.documents.office as office

    monkeypatch.setattr(office, "MAX_UNZIPPED", 2**20)
    with pytest.raises(ConversionFailed, match="zip bomb"):
        convert(bomb)


def test_a_pptx_with_one_huge_slide_is_refused_before_it_is_parsed(tmp_path):
    """Under the whole-package limit, one XML part past its own budget (the probe's 200 MiB
    slide peaked at 3.6 GB): refused from the zip directory alone, in well under a second."""
    import time

    deck = make_pptx(tmp_path / "deck.pptx")
    big = tmp_path / "big.pptx"
    with zipfile.ZipFile(deck) as src, zipfile.ZipFile(big, "w", zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "ppt/slides/slide1.xml":
                data = data.replace(b"</p:spTree>", b" " * (65 * 2**20) + b"</p:spTree>")
            z.writestr(info.filename, data)
    started = time.monotonic()
    with pytest.raises(ConversionFailed, match="slide1.xml unpacks to 65 MiB"):
        convert(big)
    assert time.monotonic() - started < 2
    assert len(convert(deck).units) == 3  # the same deck at its real size reads


def _one_stream_pdf(path, mib):
    """A valid one-page PDF whose Flate content stream inflates to `mib` MiB of text
    operators (the 2026-11-26 probe's decompression bomb)."""
    import zlib

    unit = b"BT /F1 12 Tf 72 700 Td (Hello harbour) Tj ET\n"
    data = zlib.compress(unit * (int(mib * 2**20) // len(unit)), 9)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    pdf, offsets = bytearray(b"%PDF-1.4\n"), []
    for n, body in enumerate(objects, 1):
        offsets.append(len(pdf))
        pdf += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(pdf)
    pdf += b"xref\n0 6\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    pdf += b"trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref
    path.write_bytes(bytes(pdf))
    return path


def test_a_pdf_decompression_bomb_is_refused_before_pdfium_reads_it(tmp_path):
    import resource
    import time

    small = convert(_one_stream_pdf(tmp_path / "small.pdf", 0.01))
    assert "Hello harbour" in small.units[0].text  # the same shape, a sane size, reads
    bomb = _one_stream_pdf(tmp_path / "bomb.pdf", 40)  # 120 KB on disk
    before, started = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.monotonic()
    with pytest.raises(ConversionFailed, match="decompression bomb"):
        convert(bomb)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before  # KiB
    assert grown < 100 * 1024 and time.monotonic() - started < 10


def test_pptx_one_unit_per_slide_with_tables_and_notes(tmp_path):
    doc = convert(make_pptx(tmp_path / "deck.pptx"))
    assert [u.where.slide for u in doc.units] == [1, 2, 3]
    assert (
        doc.units[0].where.section == ("Roadmap",)
        and "Notes: Mention the budget" in doc.units[0].text
    )
    assert "Basic | 9 crowns" in doc.units[2].text


def test_pptx_boxes_are_read_in_reading_order_and_a_line_of_boxes_stays_one_line(tmp_path):
    """As LibreOffice's PDF import and hand-placed slides make them: one text box per cell,
    drawn in any order. Read top to bottom, a row's boxes left to right on one line."""
    from pptx import Presentation
    from pptx.util import Inches, Pt

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])  # blank: no title placeholder
    boxes = [  # (left, top, text), drawn out of reading order
        (5.0, 2.0, "9 crowns a month"),
        (1.0, 3.0, "Pro"),
        (1.0, 2.0, "Basic"),
        (1.0, 1.0, "Plans and prices"),
        (5.0, 3.05, "25 crowns a month"),  # a little lower than its row's first box
    ]
    for left, top, text in boxes:
        shape = slide.shapes.add_textbox(Inches(left), Inches(top), Inches(3), Pt(20))
        shape.text_frame.text = text
    deck.save(str(tmp_path / "boxes.pptx"))
    text = convert(tmp_path / "boxes.pptx").units[0].text
    assert text.split("\n\n") == [
        "Plans and prices",
        "Basic 9 crowns a month",
        "Pro 25 crowns a month",
    ]


def test_html_main_content_drops_boilerplate_and_whole_keeps_it(tmp_path):
    page = make_html(tmp_path / "ferry.html")
    main = convert(page)
    text = " ".join(u.text for u in main.units)
    assert main.title == "Ferry times" and "06:40" in text and "Adult | 4 crowns" in text
    assert "Cookie settings" not in text and "About us" not in text
    assert any(u.where.section == ("Ferry times", "Fares") for u in main.units)
    whole = convert(page, ConvertSettings(html="whole"))
    assert "Cookie settings" in " ".join(u.text for u in whole.units)
    xhtml = tmp_path / "chapter.xhtml"  # as DocBook writes it: an XML declaration first
    xhtml.write_text('<?xml version="1.0" encoding="UTF-8"?>\n' + page.read_text())
    assert "06:40" in " ".join(u.text for u in convert(xhtml).units)


DOCBOOK = """<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Chapter 4. Harbour rules</title></head>
<body><div class="navheader">Prev Up Home Next</div><div class="chapter">
<div class="titlepage"><div><div><h1 class="title"><a id="c4"/>Chapter 4. Harbour rules</h1>
</div></div></div>
<p>The harbour of Ostra keeps a few rules that every skipper must know before mooring.</p>
{sections}
</div></body></html>"""
SECTION = """<div class="section"><div class="titlepage"><div><div>
<h2 class="title"><a id="s{n}"/>4.{n}. {name}</h2></div></div></div>
<p>{text}</p>
<pre class="screen"># end of {name} settings
moor = pier-{n}
# keep this line</pre>
<p>Further words about the {name} rule, so that the section is more than one line long.</p>
</div>"""
RULES = {
    "Mooring": "Boats longer than twelve metres moor at the outer pier.",
    "Fuel": "Fuel is sold at the north quay between six and ten in the morning.",
    "Waste": "Waste oil goes to the green tank beside the harbour office.",
    "Noise": "Engines stay off between midnight and five in the morning.",
}


def test_html_keeps_its_own_headings_and_a_code_comment_is_no_heading(tmp_path):
    sections = "\n".join(
        SECTION.format(n=n, name=name, text=text) for n, (name, text) in enumerate(RULES.items(), 1)
    )
    page = tmp_path / "ch04.html"
    page.write_text(DOCBOOK.format(sections=sections), encoding="utf-8")
    doc = convert(page)
    by_text = {u.text.split("\n")[0]: u.where.section for u in doc.units}
    chapter = "Chapter 4. Harbour rules"
    for n, (name, text) in enumerate(RULES.items(), 1):
        assert by_text[text] == (chapter, f"4.{n}. {name}")  # DocBook's nested headings kept
    named = {part for u in doc.units for part in u.where.section}
    assert not any("settings" in part or "keep this" in part for part in named)
    assert any("# end of Fuel settings" in u.text for u in doc.units)  # the comment is text
    assert any("headings" in note for note in doc.notes)  # read whole, and said so


KEYS = """<html><head><title>Pager keys</title></head><body>
<h1>Keys<a class="headerlink" href="#keys" title="Permalink to this heading">¶</a></h1>
<h2>3.3 How do I page?<span class="pull-right"><a class="anchor" href="#p" aria-hidden="true">#</a>
<a class="anchor" href="#toc-p" aria-hidden="true">TOC</a></span></h2>
<p>Press &lt;Return&gt; for a line; *stars* stay, a_b_c stays, &amp;amp; stays, \\l stays.</p>
<p>- no list item</p>
<table><tr><th>Key</th><th>Description</th></tr>
<tr><td>&lt;Return&gt;</td><td>go down one line</td></tr>
<tr><td>* or &lt;End&gt;</td><td>last</td></tr></table></body></html>"""


@pytest.mark.parametrize("tables", ["cells", "records"])
def test_a_whole_page_is_read_as_its_text_stands_without_heading_furniture(tmp_path, tables):
    page = tmp_path / "keys.html"
    page.write_text(KEYS, encoding="utf-8")
    doc = convert(page, ConvertSettings(html="whole", tables=tables))
    text = "\n".join(u.text for u in doc.units)
    assert "Press <Return> for a line; *stars* stay, a_b_c stays, &amp; stays, \\l stays." in text
    assert "- no list item" in text
    row = (
        "Key: <Return> | Description: go down one line"
        if tables == "records"
        else "<Return> | go down one line"
    )
    assert row in text and ("* or <End>" in text)
    assert {u.where.section for u in doc.units} == {("Keys", "3.3 How do I page?")}


def test_a_comment_line_in_extracted_markdown_is_text_unless_the_page_heads_with_it():
    from ragteam.documents.web import own_headings

    markdown = "# Setup\n\nEdit it:\n\n# a comment\nauth required\n\n```\n# fenced\n```"
    escaped, kept = own_headings(markdown, {"Setup"})
    assert kept == 1
    _, units = markdown_units(escaped)
    assert [u.where.section for u in units] == [("Setup",)] * len(units)
    text = "\n".join(u.text for u in units)
    assert "# a comment" in text and "# fenced" in text and "\\#" not in text


def test_markdown_is_split_on_headings_and_stripped():
    title, units = markdown_units(
        "---\ntitle: Notes\n---\n# Top\n\nIntro **bold** and `code`.\n\n## Sub\n\n"
        "- item [link](http://x)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n"
    )
    assert title == "Notes"
    assert units[0] == Unit("Intro bold and code.", Locator(section=("Top",)))
    assert units[1].where.section == ("Top", "Sub")
    assert "- item link" in units[1].text and "a | b\n1 | 2\n3 | 4" in units[1].text
    assert "**" not in units[1].text and "http" not in units[1].text


def test_rst_sections_by_underline():
    title, units = rst_units("Guide\n=====\n\nSee ``x`` and **y**.\n\nSetup\n-----\n\nRun it.\n")
    assert title == "Guide"
    assert units == [
        Unit("See x and y.", Locator(section=("Guide",))),
        Unit("Run it.", Locator(section=("Guide", "Setup"))),
    ]


def test_any_suffix_case_and_unknown_formats():
    from pathlib import Path

    assert converter_for(Path("MEETING.TXT")).name == "text"
    assert converter_for(Path("a.MARKDOWN")).name == "markdown"
    assert converter_for(Path("photo.heic")) is None


def test_chunks_stay_in_their_unit_within_budget_and_are_exact_spans():
    words = lambda text: len(text.split())  # noqa: E731 - a token counter for the test
    text = "\n\n".join(f"Sentence {i} is here. Another one follows it now." for i in range(30))
    units = [Unit(text, Locator(page=1)), Unit("Short page.", Locator(page=2))]
    pieces = chunk(units, budget=40, count=words, overlap=10)
    assert all(words(p.text) <= 40 for p in pieces)
    assert pieces[-1].unit.where.page == 2 and pieces[-1].text == "Short page."
    for piece in pieces:
        assert piece.unit.text[piece.start : piece.end] == piece.text
    covered = " ".join(p.text for p in pieces if p.unit.where.page == 1)
    assert all(f"Sentence {i} " in covered for i in range(30))
    huge = Unit("word " * 500)
    assert all(words(p.text) <= 40 for p in chunk([huge], 40, words))


def test_pdf_lines_wrapped_prose_joins_rows_and_headings_stay_apart():
    from ragteam.documents.pdf import paragraphs

    lines = [
        "9.6.2 Disk partition configuration",
        "For disk partition configuration, although fdisk has been considered the standard",
        "tool, parted deserves some attention. Partition tables and maps are all syn-",
        "onyms for the same thing.",
        "package popcon size description",
        "parted V:385, I:545 122 GNU Parted disk partition resizing program",
        "gdisk V:358, I:506 885 partition editor for the GPT/MBR hybrid disk",
    ]
    assert paragraphs(lines).split("\n\n") == [
        "9.6.2 Disk partition configuration",
        "For disk partition configuration, although fdisk has been considered the standard "
        "tool, parted deserves some attention. Partition tables and maps are all synonyms for "
        "the same thing.",
        "package popcon size description\n"
        "parted V:385, I:545 122 GNU Parted disk partition resizing program\n"
        "gdisk V:358, I:506 885 partition editor for the GPT/MBR hybrid disk",
    ]


def test_a_pdf_section_starts_where_its_bookmark_points_not_at_the_page_top(tmp_path):
    """Text at the top of a page that continues the section before keeps that section; the
    heading a bookmark points to mid-page starts the next one (the Debian FAQ's "created by Ian
    Murdock in 1993" was cited under the next question)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    path = tmp_path / "faq.pdf"
    pdf = canvas.Canvas(str(path), pagesize=A4)
    pdf.drawString(72, 760, "Origins")
    pdf.bookmarkPage("origins", fit="XYZ", left=0, top=772)
    pdf.addOutlineEntry("Origins", "origins", 0)
    pdf.drawString(72, 740, "Debian was founded by a student.")
    pdf.showPage()
    pdf.drawString(72, 760, "It was created by Ian Murdock in 1993 as a community project.")
    pdf.drawString(72, 600, "Codenames")
    pdf.bookmarkPage("names", fit="XYZ", left=0, top=612)
    pdf.addOutlineEntry("Codenames", "names", 0)
    pdf.drawString(72, 580, "Releases are named after Toy Story characters.")
    pdf.showPage()
    pdf.drawString(72, 760, "The unstable release is always called sid.")
    pdf.showPage()
    pdf.save()
    units = convert(path).units
    placed = [(u.where.page, u.where.section, u.text) for u in units]
    assert placed == [
        (1, ("Origins",), "Origins\nDebian was founded by a student."),
        (2, ("Origins",), "It was created by Ian Murdock in 1993 as a community project."),
        (2, ("Codenames",), "Codenames\nReleases are named after Toy Story characters."),
        (3, ("Codenames",), "The unstable release is always called sid."),
    ]


def test_hyphenation_marks_and_control_characters_leave_a_pdfs_text(tmp_path):
    """PDFium marks a word hyphenated at a line's end (U+FFFE or U+0002): the word is rejoined;
    a control character elsewhere is dropped."""
    from ragteam.documents.pdf import _lines, paragraphs

    lines = _lines("It covers system adminis\ufffe\ntration and the non\x02\ndevelopers\x07 too.")
    assert lines == ["It covers system adminis-", "tration and the non-", "developers too."]
    assert "administration" in paragraphs(lines) and "\ufffe" not in paragraphs(lines)


def test_running_headers_with_roman_labels_and_a_printed_page_count_are_removed(tmp_path):
    """'Debian Reference xxi' on the front matter, 'Debian Reference 2 / 5' after it (the
    printed count is not the file's page count): both are furniture; body numbers stay."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    path = tmp_path / "ref.pdf"
    pdf = canvas.Canvas(str(path), pagesize=A4)
    labels = ["i", "ii", "iii", "1 / 5", "2 / 5", "3 / 5", "4 / 5", "5 / 5"]
    for n, label in enumerate(labels):
        pdf.drawString(72, 800, f"Debian Reference {label}")
        pdf.drawString(72, 700, f"Section {n} says the invoice number is 80{n}17 and costs 12.")
        pdf.showPage()
    pdf.save()
    texts = [u.text for u in convert(path).units]
    assert len(texts) == 8 and not any("Debian Reference" in t for t in texts)
    assert "80317" in texts[3] and "costs 12" in texts[3]


def _manual(path):
    """A manual as LaTeX prints one: a contents page with dotted leaders, three chapters of
    three pages whose running header names the chapter and the page ("Chapter 2. Tides 5"),
    and a table of prefixes whose rows end in numbers that fall (not a contents page)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path), pagesize=A4)
    entries = [("Ferries", 2), ("Tides", 5), ("Prefixes", 8)]
    pdf.drawString(72, 780, "Contents")
    for n, (title, page) in enumerate(entries):
        for k in range(2):
            line = f"{n + 1}.{k + 1} {title} part . . . . {page}"
            pdf.drawString(72, 750 - 40 * n - 20 * k, line)
    pdf.showPage()
    for chapter, (title, first) in enumerate(entries, start=1):
        for page in range(first, first + 3):
            pdf.drawString(72, 800, f"Chapter {chapter}. {title} {page}")
            if title == "Prefixes" and page == first:
                for row, (name, power) in enumerate(
                    [
                        ("yotta", 24),
                        ("zetta", 21),
                        ("exa", 18),
                        ("peta", 15),
                        ("tera", 12),
                        ("giga", 9),
                    ]
                ):
                    pdf.drawString(72, 740 - 20 * row, f"{name} {name[0].upper()} {power}")
            else:
                pdf.drawString(72, 740, f"The {title.lower()} of page {page} run on schedule.")
                pdf.drawString(72, 720, f"Notes on the {title.lower()} are kept at the pier.")
                pdf.drawString(72, 700, "Ask the harbour office for older timetables.")
            pdf.showPage()
    pdf.save()
    return path


def test_pdf_chapter_headers_and_contents_pages_are_left_out_of_the_text(tmp_path):
    doc = convert(_manual(tmp_path / "manual.pdf"))
    text = "\n".join(u.text for u in doc.units)
    assert "Chapter" not in text  # each chapter's running header, on its three pages
    assert ". . ." not in text and "Ferries part" not in text  # the contents entries
    assert "The tides of page 6 run on schedule." in text
    assert "yotta Y 24" in text and "giga G 9" in text  # a table that ends in numbers stays
    assert any("1 pages of contents" in n for n in doc.notes)
    assert [u.where.page for u in doc.units] == list(range(2, 11))  # the contents page left no unit


def test_contents_entries_are_told_from_tables_of_values():
    from ragteam.documents.furniture import contents_page, without_contents

    toc = [f"{n}.1 Section {n} . . . . . . {n * 3}" for n in range(1, 9)]
    assert contents_page(toc, 40) and without_contents(toc, 40) == []
    plain = [f"Section {n} {n * 4}" for n in range(1, 9)]  # no leaders: in order counts
    assert contents_page(plain, 40)
    falling = [f"power {p}" for p in (24, 21, 18, 15, 12, 9, 6, 3)]
    assert not contents_page(falling, 40)
    beyond = [f"Year {1990 + n}" for n in range(8)]  # numbers past the document's pages
    assert not contents_page(beyond, 40)
    prose = ["The harbour opened in the spring and ferries ran daily to the islands. " * 3]
    index = [f"term{n} . . . . {n}" for n in range(1, 9)]
    assert without_contents(prose + index, 40) == prose  # the prose sharing the page stays
    assert not contents_page(["a 1", "b 2"], 40) and not contents_page([], 40)
