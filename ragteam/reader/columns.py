"""A table read by its header: the cell of the row the question names, in the column it asks for.

The reader finds the table (its best span stands in a row, `cell | cell`), but it often takes
the wrong cell of the row, the one whose words the question repeats ("which key skips quoted
text?" read as "skip beyond quoted text"), or a neighbour row's. Here the table around that span
is taken as it was written, its first row the header (short cells and no number in them: a
passage that starts inside a table has lost its header, and is left to the reader): the row is
the reader's own, or, when the reader took a header cell, the one holding the question's
rarest words; its *key* cell is the one sharing most of the question's words (what the
question names it by), and the answer the cell of the column the question's words name by its
header ("which key", "what color code", "what does it return"), or, in a table of two columns,
the cell that is not the key. A rule on the
table's shape and the question's words, no threshold: the answer keeps the score of the span
that found the row, and cites the same passage."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from ragteam.reader.spans import Span
from ragteam.text import bare, stems
from ragteam.types import Passage

SEPARATOR = " | "
MIN_ROWS = 3  # a header and two rows: fewer lines of cells are no table to read by its header
HEADER_CELL = 40  # characters: a longer cell is a row's, not a column's name


@dataclass(frozen=True)
class Row:
    """A table row of a passage: its line's offsets, and each cell's (start, end) in the text."""

    start: int
    end: int
    cells: tuple[tuple[int, int], ...]


def _cells(text: str, start: int, end: int) -> tuple[tuple[int, int], ...]:
    cells, at = [], start
    for part in text[start:end].split(SEPARATOR):
        lo = at + len(part) - len(part.lstrip())
        hi = at + len(part.rstrip())
        cells.append((lo, max(lo, hi)))
        at += len(part) + len(SEPARATOR)
    return tuple(cells)


def table_at(text: str, at: int) -> list[Row] | None:
    """The table whose row holds offset `at` (its header row first): the run of lines of
    cells around that line with as many cells as it, blank lines between them skipped; None
    when `at` stands in no such line or the run is shorter than MIN_ROWS."""
    lines, offset = [], 0
    for line in text.split("\n"):
        if line.strip():
            lines.append((offset, offset + len(line)))
        offset += len(line) + 1
    here = next((n for n, (lo, hi) in enumerate(lines) if lo <= at <= hi), None)
    if here is None or SEPARATOR not in text[slice(*lines[here])]:
        return None
    width = len(_cells(text, *lines[here]))

    def fits(n: int) -> bool:
        lo, hi = lines[n]
        return SEPARATOR in text[lo:hi] and len(_cells(text, lo, hi)) == width

    first, last = here, here
    while first > 0 and fits(first - 1):
        first -= 1
    while last + 1 < len(lines) and fits(last + 1):
        last += 1
    if last - first + 1 < MIN_ROWS:
        return None
    return [Row(lo, hi, _cells(text, lo, hi)) for lo, hi in lines[first : last + 1]]


def is_header(text: str, row: Row) -> bool:
    """Whether `row` can be a header row: each cell short, none holding a digit."""
    cells = [text[lo:hi] for lo, hi in row.cells]
    return all(len(c) <= HEADER_CELL and not re.search(r"\d", c) for c in cells)


def _row_named(text: str, rows: list[Row], asked: set[str], own: int) -> int:
    """The reader's own body row `own`; when it took the header (or no row), the body row
    holding the question's words that stand on the fewest rows (each weighs log(1 + rows /
    rows holding it)), or -1 when none does."""
    if 0 < own < len(rows):
        return own
    held = [asked & stems(text[r.start : r.end]) for r in rows[1:]]
    on = {w: sum(w in h for h in held) for w in asked}
    weight = {w: math.log(1 + len(held) / n) for w, n in on.items() if n}
    scores = [sum(weight.get(w, 0.0) for w in h) for h in held]
    best = max(scores, default=0.0)
    return 1 + scores.index(best) if best > 0 else -1


def _asked_column(text: str, header: Row, row: Row, asked: set[str]) -> int | None:
    """The column the question asks for: not the row's key cell (the one sharing most of the
    question's words), the one whose header the question's words name best, else in a table
    of two columns the other one; None when neither tells."""
    shared = [len(asked & stems(text[lo:hi])) for lo, hi in row.cells]
    key = shared.index(max(shared))
    named = [
        (len(asked & stems(text[lo:hi])), n) for n, (lo, hi) in enumerate(header.cells) if n != key
    ]
    best = max(named, default=(0, -1))
    if best[0] > 0 and [s for s, _ in named].count(best[0]) == 1:
        return best[1]
    return (1 - key) if len(row.cells) == 2 else None


def column_answer(question: str, passage: Passage, found: Span) -> Span | None:
    """The cell that answers `question` in the table where `found` (the reader's span over
    `passage`) stands, as a span with `found`'s score; None when `found` stands in no table,
    no column is asked for, the cell is empty or says only the question's words, or `found`
    already stands in that cell."""
    if found.kind != "span" or found.heading:
        return None
    text = passage.text
    rows = table_at(text, found.start)
    if rows is None or not is_header(text, rows[0]):
        return None
    asked = stems(question)
    own = next((n for n, r in enumerate(rows) if r.start <= found.start <= r.end), -1)
    named = _row_named(text, rows, asked, own)
    if named < 1:
        return None
    row = rows[named]
    column = _asked_column(text, rows[0], row, asked)
    if column is None:
        return None
    lo, hi = row.cells[column]
    said = set(re.findall(r"\w+", text[lo:hi].lower()))
    words = set(re.findall(r"\w+", bare(question).lower()))
    if lo == hi or (said and said <= words):
        return None  # an empty cell, or one saying only the question's words
    if lo <= found.start and found.end <= hi:
        return None
    return replace(
        found,
        start=lo,
        end=hi,
        text=text[lo:hi],
        sentence=text[row.start : row.end],
        sentence_start=row.start,
    )
