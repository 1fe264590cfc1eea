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

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from ragteam.common.text import bare, rarity, stems, weighed
from ragteam.reader.spans import Span
from ragteam.types import Passage

SEPARATOR = " | "
MIN_ROWS = 3  # a header and two rows: fewer lines of cells are no table to read by its header
HEADER_CELL = 40  # characters: a longer cell is a row's, not a column's name
# the header of the column that says what a row's key is or does
DESCRIBES = frozenset({"description", "meaning", "explanation", "purpose", "effect", "action"})


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


def _texts(text: str, row: Row) -> list[str]:
    return [text[lo:hi] for lo, hi in row.cells]


def _row_named(text: str, body: list[Row], asked: set[str], own: int | None) -> int | None:
    """The reader's own body row `own`; when it took the header, the body row holding the
    question's words that stand on the fewest rows (each weighs log(1 + rows / rows holding
    it)), or None when none does."""
    if own is not None:
        return own
    held = [asked & stems(text[r.start : r.end]) for r in body]
    weight = rarity(held)
    scores = [weighed(h, weight) for h in held]
    best = max(scores, default=0.0)
    return scores.index(best) if best > 0 else None


def _asked_column(
    header: list[str], row: list[str], asked: set[str], key: int | None = None
) -> int | None:
    """The column the question asks for: not the row's key cell (`key`, else the one sharing
    most of the question's words), the one whose header the question's words name best, else
    in a table of two columns the other one, else (the key known) the one its header calls a
    description; None when none of these tells."""
    if key is None:
        shared = [len(asked & stems(cell)) for cell in row]
        key = shared.index(max(shared))
    named = [(len(asked & stems(h)), n) for n, h in enumerate(header) if n != key]
    best = max(named, default=(0, -1))
    if best[0] > 0 and [s for s, _ in named].count(best[0]) == 1:
        return best[1]
    if len(row) == 2:
        return 1 - key
    described = [n for _, n in named if header[n].strip().lower() in DESCRIBES]
    return described[0] if described else None


def header_before(text: str, rows: list[Row], earlier: list[Passage]) -> list[str] | None:
    """The header of a table that `text` starts inside of (its first line is the table's):
    the header row of the same table where an `earlier` passage of the
    document (nearest last) holds its start, walking back while each passage is all table;
    None when the table does not start the passage, or no passage before holds its header."""
    width = len(rows[0].cells)
    if rows[0].start != len(text) - len(text.lstrip()):
        return None
    for before in reversed(earlier):
        tail = before.text.rstrip()
        found = table_at(tail, tail.rfind("\n") + 1)
        if found is None or len(found[0].cells) != width:
            return None
        if is_header(tail, found[0]):
            return _texts(tail, found[0])
        if found[0].start != len(tail) - len(tail.lstrip()):
            return None  # a table that starts there without a header: none to borrow
    return None


def column_answer(
    question: str,
    passage: Passage,
    found: Span,
    earlier: list[Passage] | None = None,
    key: int | None = None,
) -> Span | None:
    """The cell that answers `question` in the table where `found` (the reader's span over
    `passage`) stands, as a span with `found`'s score; None when `found` stands in no table,
    no column is asked for, the cell is empty or says only the question's words, or `found`
    already stands in that cell. A table the passage starts inside of is read by its header
    in the `earlier` passages of its document (nearest last), where one holds it. `key`: the
    column of the row's key cell, when the caller knows it (else the one sharing most of the
    question's words)."""
    if found.kind != "span" or found.heading:
        return None
    text = passage.text
    rows = table_at(text, found.start)
    if rows is None:
        return None
    # a table the passage starts in, that an earlier passage's ends in, goes on from there:
    # its first line here is a body row, however much it looks like a header
    header = header_before(text, rows, earlier) if earlier else None
    if header is None:
        if not is_header(text, rows[0]):
            return None
        header, rows = _texts(text, rows[0]), rows[1:]
    asked = stems(question)
    own = next((n for n, r in enumerate(rows) if r.start <= found.start <= r.end), None)
    named = _row_named(text, rows, asked, own)
    if named is None:
        return None
    row = rows[named]
    column = _asked_column(header, _texts(text, row), asked, key)
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


# a token a question names a table's row by, written as the table writes it: a single capital
# letter (`K`), a mark with no letter (`&`, `**`), a key or a format directive (`^K`, `%t`,
# `\l`, `<Esc>`); plain words are the reader's to match
_KEY = re.compile(r"^(?:[A-Z]|[^\w\s]{1,3}|[\^%\\][\w]{1,2}|<\w[\w-]*>)$")
_QUOTES = "\"'`‘’“”?,;:"


def keys_named(question: str) -> list[str]:
    """The tokens of `question` that can stand as a table's key cell (see `_KEY`), the first
    word and "I"/"A" left out."""
    tokens = [t.strip(_QUOTES) for t in question.split()[1:]]
    return [t for t in tokens if t and t not in ("A", "I") and _KEY.match(t)]


def keyed_answer(
    question: str,
    passages: list[Passage],
    scores: dict[str, float],
    earlier: Callable[[str], list[Passage]] | None = None,
) -> Span | None:
    """The cell that answers `question` in the first table row, among `passages` (in the order
    the reader ranks them), whose key cell is a token the question names it by as written
    ("what does a K flag mean?", "what does %t show?"): the column the question asks for by
    the header, else in two columns the other cell, else the description column; scored as
    the reader's best span in its passage (`scores`, by passage id; 0 without one). None when
    the question names no such token or no read passage holds a row keyed by it."""
    keys = keys_named(question)
    if not keys:
        return None
    for passage in passages:
        text = passage.text
        for line in re.finditer(r"[^\n]+", text):
            cells = [c.strip() for c in line.group().split(SEPARATOR)]
            if len(cells) < 2 or not any(c in keys for c in cells):
                continue
            key = next(n for n, c in enumerate(cells) if c in keys)
            at = line.start() + line.group().index(cells[key])
            score = scores.get(passage.id, 0.0)
            found = Span(passage.id, at, at, "", line.group(), line.start(), score)
            before = earlier(passage.id) if earlier is not None else None
            said = column_answer(question, passage, found, before, key)
            if said is not None:
                return said
    return None
