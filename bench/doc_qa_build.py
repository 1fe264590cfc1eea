"""The document QA benchmark's folder and questions, made by rule from real published documents
that no training run here has read.

    python bench/doc_qa_build.py --work /tmp/docqa

Sources (fetched with apt-get, unpacked with dpkg -x; each file's SHA-256 is checked against
`EXPECTED` below, so a changed Debian package is said, never used silently):
- the Debian Reference PDF (Osamu Aoki, GPL-2+; package `debian-reference-en`): printed page
  labels and an outline; questions from its package tables (bench/doc_answers.questions);
- SQLite's documentation (public domain; package `sqlite3-doc`): some pages kept as HTML, some
  written into a .docx (python-docx) and a .pptx (python-pptx: a slide per table, the heading as
  its title) and one into Markdown, each keeping the page's headings, paragraphs and tables.
  The .docx and .pptx are made with the libraries that write those formats, not LibreOffice.

Questions (bench/../ragteam/training/reader_documents.py's rules: a table cell by its row key
and column, a row's key by a long cell; prose clozes): kept when a passage of the synced index
holds both the question's key and its answer (that passage's file and page/section/slide is the
gold locator). Unanswerable: table questions from SQLite pages left out of the folder whose
answer stands in no passage of the folder. Written to WORK/questions.jsonl with `format`."""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import subprocess
from pathlib import Path

import lxml.html

from ragteam.reader.training.documents import MadeQuestion, _marks, prose, table_questions

SQLITE = "pkg/usr/share/doc/sqlite3"
REFERENCE = "pkg/usr/share/debian-reference"
AS_HTML = ["security", "cves", "fts5", "cli", "printf", "dbstat", "walformat"]
AS_DOCX = ["session", "assert", "fileformat2", "capi3ref"]
AS_PPTX = ["json1", "swarmvtab", "fts3"]
AS_MD = ["lang_expr", "datatype3"]
LEFT_OUT = ["speed", "nulls", "fileformat", "lang_createtable", "chronology", "zipfile"]
WANTED = {"pdf": 35, "html": 30, "html-prose": 15, "docx": 25, "pptx": 20, "md": 7, "none": 22}
# the source files as fetched on 2026-11-26 (debian-reference-en 2.100, sqlite3-doc
# 3.40.1-2+deb12u2);
# the .docx, .pptx and .md are made from them (their bytes carry a creation time)
EXPECTED: dict[str, str] = {
    "debian-reference.en.pdf": "32775deeca0770ac25282b0c894cbaae83f4dd4ab00e891b94e8f009c0366728",
    "sqlite-cli.html": "757b3e7f56a68fcca26a4142cf28fb680f2d85a7dfa1bbd1d6d79e46815f50f1",
    "sqlite-cves.html": "87de3390a5b625ecaeea07c8d67601ecbc4c3a0fc4a84e83ad60b9303eac9d31",
    "sqlite-dbstat.html": "ffdb9704c3b9f7ab1785bf7dcc6dae348c1c94a97838917bf2c8fb906a1870c3",
    "sqlite-fts5.html": "7928bd1356925e3b74e96f0e99d2a7252376b4cc6a076ad6244e0f0dab57e6dc",
    "sqlite-printf.html": "7a097dfda60e2e6a2ff486610dbea32c1a5d0becb7e49d8bf919a38dd066aa7b",
    "sqlite-security.html": "52848a33f9602cf0e01b1fd026ff67bb0463bd43c09db36570ad6f63a7a5abda",
    "sqlite-walformat.html": "6859947d1be473bfab630bfee77e9b3349538807508e7a2ddbfc6c33a9887d57",
}


def fetch(work: Path) -> None:
    for package in ("debian-reference-en", "sqlite3-doc"):
        if not list(work.glob(f"{package}_*.deb")):
            subprocess.run(["apt-get", "download", package], cwd=work, check=True)
        deb = next(work.glob(f"{package}_*.deb"))
        subprocess.run(["dpkg", "-x", str(deb), str(work / "pkg")], check=True)


def _blocks(page: Path):  # noqa: ANN202
    """The page's headings, paragraphs and tables in order: ("h", level, text), ("p", text),
    ("t", rows of cells)."""
    root = lxml.html.parse(str(page)).getroot()
    body = root.find("body") if root.find("body") is not None else root
    for el in body.iter("h1", "h2", "h3", "h4", "p", "table"):
        if any(a.tag in ("table", "p") for a in el.iterancestors()):
            continue
        text = " ".join(el.text_content().split())
        if el.tag == "table":
            rows = [
                [" ".join(c.text_content().split()) for c in tr if c.tag in ("td", "th")]
                for tr in el.iter("tr")
            ]
            if rows:
                yield ("t", rows, el)
        elif text:
            yield ("h", int(el.tag[1]), text) if el.tag[0] == "h" else ("p", text)


def write_docx(pages: list[Path], out: Path) -> None:
    import docx

    document = docx.Document()
    for page in pages:
        for block in _blocks(page):
            if block[0] == "h":
                document.add_heading(block[2], level=min(block[1], 4))
            elif block[0] == "p":
                document.add_paragraph(block[1])
            else:
                rows = block[1]
                width = max(len(r) for r in rows)
                table = document.add_table(rows=len(rows), cols=width)
                for i, row in enumerate(rows):
                    for j, cell in enumerate(row):
                        table.cell(i, j).text = cell
    document.save(str(out))


def write_pptx(pages: list[Path], out: Path) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    for page in pages:
        heading = ""
        for block in _blocks(page):
            if block[0] == "h":
                heading = block[2]
            elif block[0] == "t":
                rows = block[1]
                width = max(len(r) for r in rows)
                slide = deck.slides.add_slide(deck.slide_layouts[5])
                slide.shapes.title.text = heading or page.stem
                shape = slide.shapes.add_table(
                    len(rows), width, Inches(0.3), Inches(1.3), Inches(9.4), Inches(5.5)
                )
                for i, row in enumerate(rows):
                    for j, cell in enumerate(row):
                        shape.table.cell(i, j).text = cell
    deck.save(str(out))


def write_markdown(pages: list[Path], out: Path) -> None:
    lines: list[str] = []
    for page in pages:
        for block in _blocks(page):
            if block[0] == "h":
                lines.append("#" * block[1] + " " + block[2])
            elif block[0] == "p":
                lines.append(block[1])
            else:
                rows = [[c.replace("|", "/") for c in r] for r in block[1]]
                width = max(len(r) for r in rows)
                rows = [r + [""] * (width - len(r)) for r in rows]
                table = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
                table += ["| " + " | ".join(r) + " |" for r in rows[1:]]
                lines.append("\n".join(table))
    out.write_text("\n\n".join(lines) + "\n", encoding="utf-8")


def make_folder(work: Path) -> Path:
    docs = work / "docs"
    docs.mkdir(exist_ok=True)
    sqlite = work / SQLITE
    (docs / "debian-reference.en.pdf").write_bytes(
        (work / REFERENCE / "debian-reference.en.pdf").read_bytes()
    )
    for name in AS_HTML:
        (docs / f"sqlite-{name}.html").write_bytes((sqlite / f"{name}.html").read_bytes())
    write_docx([sqlite / f"{n}.html" for n in AS_DOCX], docs / "sqlite-internals.docx")
    write_pptx([sqlite / f"{n}.html" for n in AS_PPTX], docs / "sqlite-extensions.pptx")
    write_markdown([sqlite / f"{n}.html" for n in AS_MD], docs / "sqlite-expressions.md")
    return docs


def checksums(docs: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(docs.iterdir())
        if p.suffix in (".pdf", ".html")
    }


def _asked_from(pages: list[Path], rng: random.Random) -> list[MadeQuestion]:
    asked = []
    for page in pages:
        root = lxml.html.parse(str(page)).getroot()
        for table in root.iter("table"):
            asked += table_questions(table, rng, most=1000)
    return asked


def _prose_asked(pages: list[Path], rng: random.Random) -> list[MadeQuestion]:
    from ragteam.common.text import sentences
    from ragteam.reader.training.data import cloze

    asked = []
    for page in pages:
        for block in _blocks(page):
            if block[0] != "p":
                continue
            for a, b in sentences(block[1]):
                sentence = block[1][a:b]
                made = cloze(sentence, rng) if prose(sentence) else None
                if made:
                    asked.append(MadeQuestion(made[0], made[1], sentence))
    return asked


def gold(index, source: str, asked: MadeQuestion) -> list[dict]:  # noqa: ANN001
    """The locators of the passages of `source` that hold the question's key and answer."""
    found = []
    for p in index.passages:
        if p.locator is not None and p.locator.source == source and _marks(p.text, asked):
            found.append(locator_key(p.locator))
    return list({json.dumps(g, sort_keys=True): g for g in found}.values())


def locator_key(loc) -> dict:  # noqa: ANN001
    return {
        "source": loc.source,
        "page": loc.page,
        "slide": loc.slide,
        "section": list(loc.section),
    }


def _kept(  # noqa: ANN201
    index,
    source: str,
    asked: list[MadeQuestion],
    n: int,
    rng: random.Random,
    kind: str,  # noqa: ANN001
) -> list:
    rng.shuffle(asked)
    rows, seen = [], set()
    for a in asked:
        if len(rows) >= n:
            break
        if a.question in seen:
            continue
        seen.add(a.question)
        where = gold(index, source, a)
        if where:
            rows.append({"question": a.question, "answer": a.answer, "format": kind, "gold": where})
    return rows


def questions(work: Path, docs: Path, index, rng: random.Random) -> tuple[list[dict], dict]:  # noqa: ANN001
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from doc_answers import page_texts
    from doc_answers import questions as reference_questions

    sqlite = work / SQLITE
    pdf = docs / "debian-reference.en.pdf"
    made: list[dict] = []
    offered: dict[str, int] = {}
    for q in reference_questions(work, page_texts(pdf), 10_000)[: WANTED["pdf"]]:
        spot = {"source": pdf.name, "page": q["page"], "slide": None, "section": []}
        made.append(
            {"question": q["question"], "answer": q["answer"], "format": "pdf", "gold": [spot]}
        )
    plan = [
        ("html", AS_HTML, None),
        ("docx", AS_DOCX, "sqlite-internals.docx"),
        ("pptx", AS_PPTX, "sqlite-extensions.pptx"),
        ("md", AS_MD, "sqlite-expressions.md"),
    ]
    for kind, names, source in plan:
        for name in names if source is None else [names]:
            pages = [sqlite / f"{n}.html" for n in ([name] if source is None else name)]
            asked = _asked_from(pages, rng)
            offered[kind] = offered.get(kind, 0) + len(asked)
            file = source or f"sqlite-{name}.html"
            share = WANTED[kind] if source else -(-WANTED[kind] // len(names))
            made += _kept(index, file, asked, share, rng, kind)
    prose_pages = [sqlite / f"{n}.html" for n in AS_HTML]
    for page in prose_pages:
        asked = _prose_asked([page], rng)
        share = -(-WANTED["html-prose"] // len(prose_pages))
        made += _kept(index, f"sqlite-{page.stem}.html", asked, share, rng, "html-prose")
    made += unanswerable(index, [sqlite / f"{n}.html" for n in LEFT_OUT], rng)
    for i, row in enumerate(made):
        row["id"] = f"d{i:03d}"
    return made, offered


def unanswerable(index, pages: list[Path], rng: random.Random) -> list[dict]:  # noqa: ANN001
    def norm(text: str) -> str:
        return " ".join(text.lower().split())

    everything = "\n".join(norm(p.text) for p in index.passages)
    asked = _asked_from(pages, rng)
    rng.shuffle(asked)
    rows = []
    for a in asked:
        if len(rows) >= WANTED["none"]:
            break
        if len(norm(a.answer)) >= 2 and not re.search(
            rf"(?<!\w){re.escape(norm(a.answer))}(?!\w)", everything
        ):
            rows.append({"question": a.question, "answer": a.answer, "format": "none", "gold": []})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/docqa"))
    parser.add_argument("--record", action="store_true", help="print the checksums to record")
    args = parser.parse_args()
    from ragteam.retrieval import load_index, sync_folder
    from ragteam.retrieval.index import IndexSettings

    args.work.mkdir(parents=True, exist_ok=True)
    fetch(args.work)
    docs = make_folder(args.work)
    sums = checksums(docs)
    if args.record:
        print(json.dumps(sums, indent=1))
    changed = [name for name, digest in sums.items() if EXPECTED and EXPECTED.get(name) != digest]
    if changed:
        raise SystemExit(f"these sources differ from the recorded ones: {changed}")
    sync_folder(docs, args.work / "ix", index=IndexSettings(retriever="hybrid"))
    index = load_index(args.work / "ix")
    made, offered = questions(args.work, docs, index, random.Random(7))
    out = args.work / "questions.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in made), encoding="utf-8")
    counts: dict[str, int] = {}
    for r in made:
        counts[r["format"]] = counts.get(r["format"], 0) + 1
    print(f"{len(made)} questions {counts} (table questions offered per format: {offered})")


if __name__ == "__main__":
    main()
