"""Text in the encodings people's files have (hardening round 3, M9, M10, L2): Windows-1252
with a few accents is read as such and the sync says it guessed; UTF-16 with a byte-order mark
is text, not binary; a NUL byte without one is still binary; HTML nested deeper than lxml's
default limit of 255 levels keeps its text."""

from __future__ import annotations

import pytest

from ragteam.documents import ConversionFailed, ConvertSettings, converter_for
from ragteam.documents.text import decode_text
from ragteam.retrieval import load_index, sync_folder
from ragteam.retrieval.index import IndexSettings


def _convert(path):
    return converter_for(path).convert(path, ConvertSettings())


def test_windows_1252_with_few_accents_is_read_with_a_note(tmp_path):
    text = "The harbour office opens at nine. " * 60 + "The master is Jürgen Müller from Köln. "
    path = tmp_path / "notes.txt"
    path.write_bytes(text.encode("cp1252"))
    read = _convert(path)
    assert "Jürgen Müller from Köln" in read.units[0].text and "\ufffd" not in read.units[0].text
    assert read.notes and "Windows-1252" in read.notes[0]


def test_other_legacy_encodings_are_not_taken_for_windows_1252():
    russian = "Привет мир, порт открыт сегодня в девять"
    japanese = "港の事務所は九時に開きます。"
    assert decode_text(russian.encode("cp1251"))[0] == russian
    assert decode_text(japanese.encode("shift_jis"))[0] == japanese
    assert decode_text(b"plain") == ("plain", "")


def test_utf16_with_a_byte_order_mark_is_text_and_nul_bytes_are_binary(tmp_path):
    path = tmp_path / "notepad.txt"
    path.write_bytes("\ufeffThe tide table is printed weekly.".encode("utf-16-le"))
    read = _convert(path)
    assert read.units[0].text == "The tide table is printed weekly." and "UTF-16" in read.notes[0]
    binary = tmp_path / "image.txt"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    with pytest.raises(ConversionFailed, match="binary"):
        _convert(binary)


def test_html_nested_deeper_than_255_levels_keeps_its_text(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.html").write_text(
        "<html><body>"
        + "<div>" * 300
        + "The ferry leaves at nine."
        + "</div>" * 300
        + "<p>Tickets cost 4 crowns at the harbour office.</p></body></html>"
    )
    report = sync_folder(docs, tmp_path / "ix", index=IndexSettings(retriever="bm25"))
    assert [s.status for s in report.files] == ["read"]
    text = " ".join(p.text for p in load_index(tmp_path / "ix").passages)
    assert "The ferry leaves at nine." in text and "4 crowns" in text


def test_docx_headings_are_read_without_python_docx_per_paragraph_style_scan(tmp_path, monkeypatch):
    """H2: python-docx's `paragraph.style` scans every style for every paragraph (96% of the
    time of a long document); the converter reads style ids and names them from one table."""
    import docx
    from docx.text.paragraph import Paragraph

    document = docx.Document()
    document.add_heading("Harbour rules", level=1)
    document.add_paragraph("Ships report their cargo.")
    document.add_heading("Fees", level=2)
    document.add_paragraph("The toll is 3 crowns.")
    path = tmp_path / "rules.docx"
    document.save(str(path))

    def slow(self):
        raise AssertionError("paragraph.style scans every style: not for every paragraph")

    monkeypatch.setattr(Paragraph, "style", property(slow))
    read = _convert(path)
    sections = {u.where.section: u.text for u in read.units}
    assert sections[("Harbour rules", "Fees")] == "The toll is 3 crowns."
    assert read.title == "Harbour rules"


def test_pypdf_warnings_become_notes_not_lines_on_stderr(capfd):
    """L6: pypdf's log lines ("Ignoring malformed page label entry") leaked into the sync's
    output; they are collected while the PDF is read and kept as the file's notes."""
    import logging

    from ragteam.documents.pdf import _said_by

    with _said_by("pypdf") as said:
        logging.getLogger("pypdf").warning("Ignoring malformed page label entry")
    logging.getLogger("pypdf").debug("after")
    assert said == ["Ignoring malformed page label entry"]
    assert "malformed" not in capfd.readouterr().err


def _pdf(path, pages):
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path))
    for lines in pages:
        for n, line in enumerate(lines):
            c.drawString(72, 800 - 40 * n, line)
        c.showPage()
    c.save()
    return path


def test_pdf_furniture_is_only_what_repeats_or_counts_pages(tmp_path):
    """M8: on short pages every line that repeated by shape was taken for furniture (a 3-page
    report was called scanned; invoices lost their numbers and dates silently)."""
    report = _pdf(
        tmp_path / "report.pdf",
        [
            [
                "Harbour Report",
                f"Page {p}: the harbour budget for year {2019 + p} was {99 + p} thousand crowns.",
                f"Page {p}",
            ]
            for p in (1, 2, 3)
        ],
    )
    texts = [u.text for u in _convert(report).units]
    assert len(texts) == 3 and "budget for year 2021" in texts[1]
    assert all("Harbour Report" not in t and not t.endswith("Page 2") for t in texts)
    invoices = _pdf(
        tmp_path / "invoices.pdf",
        [
            [
                f"Invoice {1000 + p}",
                f"Due date 2026-0{p}-12",
                f"Amount due: {40 + p} crowns",
                f"{p} / 4",
            ]
            for p in (1, 2, 3, 4)
        ],
    )
    texts = [u.text for u in _convert(invoices).units]
    assert "Invoice 1003" in texts[2] and "Due date 2026-03-12" in texts[2]
    assert "Amount due: 43 crowns" in texts[2]
    assert not any("/ 4" in t for t in texts)  # the page counter is furniture
