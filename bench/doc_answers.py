"""Answers with page citations over a real PDF, against a text-only baseline.

    python bench/doc_answers.py --work /tmp/docbench [--n 40] [--strategies oner,smart]

The document: the Debian Reference PDF (261 pages; see bench/documents.py, which fetches it).
Questions are made from the package tables of its HTML edition (a row's description ->
"which package ..."; the answer is the package name), kept when the row's text stands on
exactly one PDF page, which is the gold page; a seeded sample of `--n`.

Two indexes of the same PDF, both hybrid:
- structured: `ragteam index sync` (a unit per page, furniture removed, outline sections,
  passages of 128 encoder tokens that never cross a page);
- text-only: the PDF's text as one plain document (PDFium's text of every page joined, no page
  boundaries, no furniture removal), cut into 100-word passages; each passage's pages are
  known from its words, so a hit counts for every page it overlaps.

Reported: recall of the gold page at 1 and 5; per strategy, answer match and citation
accuracy (a matching answer cites a passage on the gold page; `first` = its first citation
does), with paired bootstrap CIs of structured - text-only."""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import lxml.html

from ragteam import answer
from ragteam.common.metrics import match
from ragteam.retrieval import build_index, load_index, sync_folder
from ragteam.retrieval.index import IndexSettings

HTML_DIR = "pkg/usr/share/debian-reference"
PDF = "pkg/usr/share/debian-reference/debian-reference.en.pdf"


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def page_texts(pdf: Path) -> list[str]:
    from ragteam.documents.pdf import page_texts as raw

    return ["".join(parts) for parts in raw(pdf)]


def questions(work: Path, pages: list[str], n: int) -> list[dict]:
    normed = [_norm(p) for p in pages]
    rows, seen = [], set()
    for chapter in sorted((work / HTML_DIR).glob("ch*.en.html")):
        for tr in lxml.html.parse(str(chapter)).getroot().iter("tr"):
            cells = [" ".join(c.text_content().split()) for c in tr if c.tag in ("td", "th")]
            if len(cells) != 4 or cells[0] == "package" or len(cells[3].split()) < 4:
                continue
            package, description = cells[0], cells[3]
            if description in seen:
                continue
            seen.add(description)
            probe = _norm(description)[:60]
            found = [i + 1 for i, t in enumerate(normed) if probe in t and _norm(package) in t]
            if len(found) == 1:
                rows.append({"package": package, "description": description, "page": found[0]})
    random.Random(0).shuffle(rows)
    return [
        {
            "id": f"q{i}",
            "question": f"Which Debian package is this: {r['description']}?",
            "answer": r["package"],
            "page": r["page"],
        }
        for i, r in enumerate(rows[:n])
    ]


def text_only_corpus(pages: list[str], path: Path) -> dict[str, set[int]]:
    """The PDF as plain text in 100-word passages; returns passage id -> its pages."""
    words = [(w, number) for number, text in enumerate(pages, start=1) for w in text.split()]
    spans: dict[str, set[int]] = {}
    with path.open("w", encoding="utf-8") as handle:
        for start in range(0, len(words), 100):
            chunk = words[start : start + 100]
            pid = f"reference-{start // 100}"
            spans[pid] = {p for _, p in chunk}
            row = {"id": pid, "title": "debian-reference", "text": " ".join(w for w, _ in chunk)}
            handle.write(json.dumps(row) + "\n")
    return spans


def build(work: Path, pages: list[str]) -> tuple[Path, Path, dict[str, set[int]]]:
    folder, structured = work / "pdf-only", work / "ix-structured"
    folder.mkdir(exist_ok=True)
    target = folder / "debian-reference.en.pdf"
    if not target.exists():
        target.write_bytes((work / PDF).read_bytes())
    sync_folder(folder, structured, index=IndexSettings(retriever="hybrid"))
    corpus, plain = work / "text-only.jsonl", work / "ix-text-only"
    spans = text_only_corpus(pages, corpus)
    if not (plain / "manifest.json").exists():
        build_index(corpus, plain, retriever="hybrid", passage_words=0)
    return structured, plain, spans


def pages_of(passage, spans: dict[str, set[int]]) -> set[int]:
    if passage.locator is not None and passage.locator.page is not None:
        return {passage.locator.page}
    return spans.get(passage.id, set())


def bootstrap(diffs: list[float], rounds: int = 2000) -> tuple[float, float, float]:
    rng = random.Random(1)
    means = sorted(sum(rng.choice(diffs) for _ in diffs) / len(diffs) for _ in range(rounds))
    return sum(diffs) / len(diffs), means[int(0.025 * rounds)], means[int(0.975 * rounds)]


def run(qs: list[dict], index, spans, strategy: str) -> list[dict]:
    rows = []
    for q in qs:
        hits = index.retrieve(q["question"], k=5)
        row = {
            "r1": float(q["page"] in pages_of(hits[0], spans)) if hits else 0.0,
            "r5": float(any(q["page"] in pages_of(h, spans) for h in hits)),
        }
        if strategy != "retrieval":
            started = time.perf_counter()
            result = answer(q["question"], index=index, strategy=strategy)
            cited = [index.passage(c.passage_id) for c in result.citations]
            on_page = [p is not None and q["page"] in pages_of(p, spans) for p in cited]
            row |= {
                "match": match(result.text, [q["answer"]]),
                "cites_page": float(any(on_page)),
                "first_on_page": float(bool(on_page) and on_page[0]),
                "seconds": time.perf_counter() - started,
                "answer": result.text,
            }
        rows.append(row)
    return rows


def summary(name: str, a: list[dict], b: list[dict]) -> None:
    keys = [k for k in ("r1", "r5", "match", "seconds") if k in a[0]]
    for key in keys:
        mean, low, high = bootstrap([x[key] - y[key] for x, y in zip(a, b, strict=True)])
        print(
            f"{name:10} {key:8} structured {sum(x[key] for x in a) / len(a):.3f}  text-only "
            f"{sum(y[key] for y in b) / len(b):.3f}  diff {mean:+.3f} ({low:+.3f} to {high:+.3f})"
        )
    for label, rows in (("structured", a), ("text-only", b)):
        matched = [r for r in rows if r.get("match")]
        if matched:
            print(
                f"{name:10} {label:10} matching answers {len(matched)}: cite the gold page "
                f"{sum(r['cites_page'] for r in matched) / len(matched):.3f}, first citation "
                f"on it {sum(r['first_on_page'] for r in matched) / len(matched):.3f}"
            )


def paired(args: argparse.Namespace, qs: list[dict], index, spans) -> None:
    """Each strategy against `--paired-with` on the structured index: answer match, right-page
    citation of the matching answers, s/question, paired bootstrap of the differences."""
    runs = {}
    for strategy in dict.fromkeys([args.paired_with, *args.strategies.split(",")]):
        out = args.work / f"doc_answers_structured_{strategy}.json"
        runs[strategy] = (
            json.loads(out.read_text()) if out.exists() else run(qs, index, spans, strategy)
        )
        out.write_text(json.dumps(runs[strategy], indent=1))
    base = runs[args.paired_with]
    for strategy, rows in runs.items():
        matched = [r for r in rows if r["match"]]
        cites = sum(r["first_on_page"] for r in matched) / len(matched) if matched else 0.0
        line = (
            f"{strategy:8} match {sum(r['match'] for r in rows) / len(rows):.3f} "
            f"({len(matched)}/{len(rows)}); matching answers citing the gold page first "
            f"{cites:.3f}; {sum(r['seconds'] for r in rows) / len(rows):.2f} s/question"
        )
        if strategy != args.paired_with:
            diffs = [x["match"] - y["match"] for x, y in zip(rows, base, strict=True)]
            mean, low, high = bootstrap(diffs)
            line += f"; match - {args.paired_with} {mean:+.3f} ({low:+.3f} to {high:+.3f})"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=Path("/tmp/docbench"))
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--strategies", default="oner,smart")
    parser.add_argument(
        "--paired-with",
        default="",
        help="instead of the text-only baseline, compare each strategy with this one on the "
        "structured index (paired, the same questions)",
    )
    args = parser.parse_args()
    pages = page_texts(args.work / PDF)
    qs = questions(args.work, pages, args.n)
    (args.work / "doc_questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in qs))
    print(f"{len(qs)} questions")
    structured, plain, spans = build(args.work, pages)
    a_index, b_index = load_index(structured), load_index(plain)
    print(f"passages: structured {len(a_index.passages)}, text-only {len(b_index.passages)}")
    if args.paired_with:
        paired(args, qs, a_index, spans)
        return
    for strategy in ["retrieval", *args.strategies.split(",")]:
        a = run(qs, a_index, spans, strategy)
        b = run(qs, b_index, spans, strategy)
        summary(strategy, a, b)
        out = args.work / f"doc_answers_{strategy}.json"
        out.write_text(json.dumps({"structured": a, "text_only": b}, indent=1))


if __name__ == "__main__":
    main()
