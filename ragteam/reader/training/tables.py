"""Table questions people wrote, for the span reader: WikiTableQuestions (Pasupat & Liang 2015,
CC BY-SA 4.0; github.com/ppasupat/WikiTableQuestions), about 14,000 training questions over
1,600 Wikipedia tables. A question whose answer is one cell's whole text is read over its
table as ragteam's converters give it (`documents.tables`: a row a line, `Header: cell`
records, the page's title as the passage's heading line), cut into passages of a few rows; the
gold passages are those holding the cell, beside other passages of the same table. The same
question over another table's passages is a "no answer" group."""

from __future__ import annotations

import csv
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

from ragteam.documents.tables import table_lines
from ragteam.errors import InputError
from ragteam.reader.training.data import Group

ROWS_A_PASSAGE = 8  # rows of a table in one passage (about 150-250 tokens with their headers)
MAX_CHARS = 1200  # a passage of rows ends before this many characters
DISTRACTORS = 2  # other passages of the same table read beside the gold one
# answers that are counts or sums of the table are rarely one cell: such questions are left out
COMPUTED = re.compile(r"^(how many|what is the (total|difference|average|sum))\b", re.I)


def _table(path: Path) -> tuple[list[str], list[list[str]]] | None:
    try:
        with path.open(encoding="utf-8", newline="") as f:
            rows = [[c.replace("\\n", " ") for c in r] for r in csv.reader(f, escapechar="\\")]
    except (OSError, csv.Error, UnicodeDecodeError):
        return None
    return (rows[0], rows[1:]) if len(rows) > 2 else None


def _title(folder: Path, context: str) -> str:
    # csv/204-csv/590.csv -> page/204-page/590.json
    page = folder / context.replace("csv", "page").replace(".page", ".json")
    try:
        return str(json.loads(page.read_text(encoding="utf-8")).get("title", ""))
    except (OSError, ValueError):
        return ""


def passages(
    title: str, header: list[str], rows: list[list[str]], records: bool = True
) -> list[tuple[str, list[int]]]:
    """The table's passages (the title on the first line, then up to ROWS_A_PASSAGE records),
    each with the numbers of the rows it holds. Without `records`, rows are `cell | cell` as
    `index sync` writes a table by default, each passage's rows after the header row's."""
    head = f"{title}\n" if title else ""
    if not records:
        head += " | ".join(" ".join(h.replace("|", "/").split()) for h in header) + "\n"
    out: list[tuple[str, list[int]]] = []
    lines: list[str] = []
    held: list[int] = []
    for n, cells in enumerate(rows):
        line = (
            (table_lines(header, [cells])[-1] if records else table_lines(None, [cells])[0])
            if any(c.strip() for c in cells)
            else ""
        )
        if not line:
            continue
        if lines and (len(lines) >= ROWS_A_PASSAGE or sum(map(len, lines)) + len(line) > MAX_CHARS):
            out.append((head + "\n".join(lines), held))
            lines, held = [], []
        lines.append(line)
        held.append(n)
    if lines:
        out.append((head + "\n".join(lines), held))
    return out


def cell_spans(text: str, answer: str) -> list[tuple[int, int]]:
    """Where `answer` stands in `text` as a whole cell's value (after `Header: ` or at a line's
    start, before ` | ` or the line's end)."""
    pattern = re.compile(r"(?:^|: |\| )(" + re.escape(answer) + r")(?= \||$)", re.M)
    return [m.span(1) for m in pattern.finditer(text)]


def wtq(folder: Path, count: int, rng: random.Random, records: bool = True) -> Iterator[Group]:
    """Up to `count` questions of WikiTableQuestions' training file whose answer is one cell,
    each over its table's passages (a span group) and over another table's (a none group);
    the rows as records, or (`records` False) as `cell | cell`."""
    tsv = folder / "data" / "training.tsv"
    if not tsv.is_file():
        raise InputError(f"{folder} holds no data/training.tsv: name a WikiTableQuestions folder")
    with tsv.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    rng.shuffle(rows)
    tables: dict[str, list[tuple[str, list[int]]]] = {}
    made = 0
    for row in rows:
        answer, question = row["targetValue"].strip(), row["utterance"].strip()
        if made >= count or "|" in answer or not answer or COMPUTED.match(question):
            continue
        if row["context"] not in tables:
            table = _table(folder / row["context"])
            title = _title(folder, row["context"])
            tables[row["context"]] = passages(title, *table, records) if table else []
        parts = [t for t, _ in tables[row["context"]]]
        gold = [t for t in parts if cell_spans(t, answer)]
        if not gold or len(gold) > 2:
            continue
        others = [t for t in parts if t not in gold]
        shown = gold + rng.sample(others, min(DISTRACTORS, len(others)))
        rng.shuffle(shown)
        qid = "wtq-" + row["context"].replace("/", "-") + "/" + row["id"]
        spans = tuple(tuple(cell_spans(t, answer)) for t in shown)
        yield Group(question, tuple(shown), "span", spans, answers=(answer,), source="wtq", qid=qid)
        made += 1
        elsewhere = [t for ctx, ps in tables.items() if ctx != row["context"] for t, _ in ps]
        if made % 3 == 0 and len(elsewhere) >= 3:
            empty = [t for t in rng.sample(elsewhere, 3) if not cell_spans(t, answer)]
            if empty:
                yield Group(
                    question, tuple(empty), "none", answers=(answer,), source="wtq", qid=qid
                )
