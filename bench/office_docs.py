"""Real Word and PowerPoint files: the Debian Reference (see bench/documents.py) converted by
LibreOffice (Debian's `libreoffice-writer-nogui`/`libreoffice-impress-nogui`) — its 15 HTML
chapters to .docx, and a 30-page excerpt of its PDF to .pptx (one slide a page) — then read by
ragteam's converters and searched.

    python bench/office_docs.py --work /tmp/docbench [--compare /tmp/cmpvenv/bin/python]

Questions are the package-table rows of the HTML edition ("Which Debian package is this:
DESCRIPTION?"): for a .docx the gold is its chapter file and the section heading above the
table; for the .pptx the gold slide is the PDF page the row stands on (as in doc_answers.py).
Reported: conversion seconds per file, units, characters and table rows kept (package and
description within one passage), and recall @1/@5 of the gold file+section / file+slide.
`--compare` runs bench/compare_converters.py in a scratch virtualenv holding Haystack and
LlamaIndex, on the same files."""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

import lxml.html
from doc_answers import HTML_DIR, PDF, _norm, page_texts, questions
from documents import fetch

FIRST, LAST = 60, 89  # the PDF pages made into slides (1-based, inclusive)


def make_office_files(work: Path) -> Path:
    """The .docx chapters and the .pptx excerpt, converted once by LibreOffice."""
    folder = work / "office"
    if (folder / "pptx" / "excerpt.pptx").exists():
        return folder
    for kind in ("docx", "pptx"):
        (folder / kind).mkdir(parents=True, exist_ok=True)
    from pypdf import PdfReader, PdfWriter

    reader, writer = PdfReader(str(work / PDF)), PdfWriter()
    for number in range(FIRST - 1, LAST):
        writer.add_page(reader.pages[number])
    excerpt = work / "excerpt.pdf"
    with excerpt.open("wb") as handle:
        writer.write(handle)
    chapters = sorted((work / HTML_DIR).glob("ch*.en.html"))
    subprocess.run(
        [
            "soffice",
            "--headless",
            "--infilter=HTML (StarWriter)",
            "--convert-to",
            "docx:MS Word 2007 XML",
            "--outdir",
            str(folder / "docx"),
            *(str(c) for c in chapters),
        ],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [
            "soffice",
            "--headless",
            "--infilter=impress_pdf_import",
            "--convert-to",
            "pptx",
            "--outdir",
            str(folder / "pptx"),
            str(excerpt),
        ],
        check=True,
        capture_output=True,
    )
    return folder


def table_rows(work: Path) -> list[dict]:
    """Every 4-cell package row of the HTML chapters with the heading it stands under."""
    rows = []
    for chapter in sorted((work / HTML_DIR).glob("ch*.en.html")):
        heading = ""
        for element in lxml.html.parse(str(chapter)).getroot().iter("h1", "h2", "h3", "h4", "tr"):
            if element.tag != "tr":
                heading = " ".join(element.text_content().split())
                continue
            cells = [" ".join(c.text_content().split()) for c in element if c.tag in ("td", "th")]
            if len(cells) == 4 and cells[0] != "package" and len(cells[3].split()) >= 4:
                docx = chapter.name.replace(".html", ".docx")
                rows.append(
                    {"package": cells[0], "description": cells[3], "file": docx, "section": heading}
                )
    return rows


def conversions(folder: Path) -> list[dict]:
    from ragteam.documents import ConvertSettings, converter_for

    out = []
    for path in sorted([*folder.glob("docx/*.docx"), *folder.glob("pptx/*.pptx")]):
        started = time.perf_counter()
        doc = converter_for(path).convert(path, ConvertSettings())
        out.append(
            {
                "file": path.name,
                "seconds": time.perf_counter() - started,
                "units": len(doc.units),
                "chars": sum(len(u.text) for u in doc.units),
                "sections": len({u.where.section for u in doc.units if u.where.section}),
                "text": "\n\n".join(u.text for u in doc.units),
            }
        )
    return out


def rows_kept(text: str, rows: list[dict]) -> float:
    """Share of table rows whose package and description stand within 300 characters."""
    normed = _norm(text)
    kept = 0
    for row in rows:
        at = normed.find(_norm(row["description"])[:60])
        if at >= 0 and _norm(row["package"]) in normed[max(0, at - 300) : at + 300]:
            kept += 1
    return kept / max(1, len(rows))


def recall(index, qs: list[dict], gold) -> tuple[float, float]:
    r1 = r5 = 0.0
    for q in qs:
        hits = index.retrieve(q["question"], k=5)
        good = [gold(q, h) for h in hits]
        r1 += float(bool(good) and good[0])
        r5 += float(any(good))
    return r1 / len(qs), r5 / len(qs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=Path("/tmp/docbench"))
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument(
        "--compare",
        default="",
        help="python of a venv with haystack-ai, llama-index-core and llama-index-readers-file",
    )
    args = parser.parse_args()
    fetch(args.work)
    folder = make_office_files(args.work)
    rows = table_rows(args.work)
    print(f"{len(rows)} package rows")
    converted = conversions(folder)
    docx_rows = {c["file"]: [r for r in rows if r["file"] == c["file"]] for c in converted}
    page_rows = questions(args.work, page_texts(args.work / PDF), 10_000)
    slide_rows = [r for r in page_rows if FIRST <= r["page"] <= LAST]
    for c in converted:
        mine = docx_rows.get(c["file"]) or [
            {
                "package": r["answer"],
                "description": r["question"].removeprefix("Which Debian package is this: ")[:-1],
            }
            for r in slide_rows
        ]
        c["rows_kept"] = rows_kept(c.pop("text"), mine) if mine else None
        print(json.dumps(c))
    (args.work / "office_conversions.json").write_text(json.dumps(converted, indent=1))

    from ragteam.retrieval import load_index, sync_folder
    from ragteam.retrieval.index import IndexSettings

    indexes = {}
    for kind in ("docx", "pptx"):  # apart: the same table rows stand in both
        sync_folder(
            folder / kind, args.work / f"ix-{kind}", index=IndexSettings(retriever="hybrid")
        )
        indexes[kind] = load_index(args.work / f"ix-{kind}")
    docx_qs = [dict(r, question=f"Which Debian package is this: {r['description']}?") for r in rows]
    random.Random(0).shuffle(docx_qs)
    docx_qs = docx_qs[: args.n]
    r1, r5 = recall(
        indexes["docx"],
        docx_qs,
        lambda q, h: (
            h.locator is not None
            and h.locator.source == q["file"]
            and h.locator.section[-1:] == (q["section"],)
        ),
    )
    print(f"docx: {len(docx_qs)} questions, gold file+section recall @1 {r1:.3f} @5 {r5:.3f}")
    r1, r5 = recall(
        indexes["pptx"],
        slide_rows,
        lambda q, h: (
            h.locator is not None
            and h.locator.source == "excerpt.pptx"
            and h.locator.slide == q["page"] - FIRST + 1
        ),
    )
    print(f"pptx: {len(slide_rows)} questions, gold file+slide recall @1 {r1:.3f} @5 {r5:.3f}")
    if args.compare:
        script = Path(__file__).with_name("compare_converters.py")
        subprocess.run(
            [
                args.compare,
                str(script),
                str(folder),
                str(args.work / PDF),
                str(args.work / HTML_DIR / "ch02.en.html"),
            ],
            check=True,
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
