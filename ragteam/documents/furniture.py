"""What a PDF page carries that is not its text: running headers and footers (a title, a
chapter's name, the page's number, at the top or bottom of page after page) and tables of
contents (a list of titles, each with the page it starts on). Judged on the whole file's pages;
the converter leaves both out of its passages."""

from __future__ import annotations

import re
from collections import Counter

EDGE_LINES = 2  # lines at the top and at the bottom of a page that may be running furniture
FRONT_MATTER = 60  # pages before a document's printed page 1, at most
FEW = 3  # pages a chapter's running header stands on, at least, to be taken for one
_DIGITS = re.compile(r"\d+")
_ROMAN = re.compile(r"^[ivxlcdm]+$", re.IGNORECASE)
_COUNTER = re.compile(r"#\s*(?:/|of)\s*#")  # "3 / 12", "Page 3 of 12": one counter
_OUT_OF = re.compile(r"\d\s*(?:/|of)\s*(\d+)")  # the count in "3 / 12", "3 of 12"
# a contents entry: a title, dotted leaders or a space, the page it starts on
_LEADERS = re.compile(r"(?:\.\s*){3,}\d{1,4}$")
_ENTRY = re.compile(r"^\S.*\s(\d{1,4})$")
CONTENTS_SHARE = 0.6  # of a page's lines that are entries, at least
CONTENTS_LINES = 5  # entries a contents page holds, at least
IN_ORDER = 0.8  # of the entries' page numbers that do not go down from one to the next


def strip_furniture(pages: list[list[str]]) -> list[list[str]]:
    """Remove running headers and footers: a line at a page's top or bottom that stands there
    on most pages word for word, or whose only difference is the page's number ("Page 3",
    "3 / 12", "xii"; a number the same on most pages, such as the printed page count, counts as
    one), or a chapter's running header: a page's first or last line, of one shape on at least
    FEW pages' edges, that starts or ends with its page's printed number (the file's page less
    the offset most pages' first and last lines show). A line whose numbers are something else
    (an invoice number, a date, a year in a sentence) is body text, and a page never loses all
    its lines. Needs 3 pages."""
    texted = [lines for lines in pages if lines]
    if len(texted) < 3:
        return pages
    exact: Counter[str] = Counter()
    shapes: Counter[str] = Counter()
    numbers: Counter[int] = Counter()
    offsets: Counter[int] = Counter()
    for number, lines in enumerate(pages, start=1):
        edges = set(lines[:EDGE_LINES] + lines[-EDGE_LINES:])
        exact.update(edges)
        shapes.update({_shape(line) for line in edges})
        numbers.update({int(n) for line in edges for n in _DIGITS.findall(line)})
        ends = {n for line in lines[:1] + lines[-1:] for n in _end_numbers(line)}
        offsets.update({number - n for n in ends if 0 <= number - n <= FRONT_MATTER})
    most = len(texted) / 2
    fixed = {n for n, seen in numbers.items() if seen > most} | {len(pages)}
    offset = next((d for d, seen in offsets.most_common(1) if seen > most), None)
    out = []
    for number, lines in enumerate(pages, start=1):
        edge = set(range(min(EDGE_LINES, len(lines)))) | set(
            range(max(0, len(lines) - EDGE_LINES), len(lines))
        )
        drop = {
            i
            for i in edge
            if exact[lines[i]] > most
            or (shapes[_shape(lines[i])] > most and _numbers_page(lines[i], number, fixed))
            or (
                offset is not None
                and i in (0, len(lines) - 1)
                and shapes[_shape(lines[i])] >= FEW
                and number - offset in _end_numbers(lines[i])
            )
        }
        kept = [line for i, line in enumerate(lines) if i not in drop]
        out.append(kept if kept or not lines else lines)
    return out


MIN_LEFT = 200  # characters of a contents page's other lines kept as text, at least


def without_contents(lines: list[str], pages: int) -> list[str] | None:
    """A page's lines with its contents entries left out when it is a contents page (its
    other lines, prose that shares the page, kept if they hold MIN_LEFT characters, else
    nothing), or None when it is not one."""
    if not contents_page(lines, pages):
        return None
    left = [line for line in lines if not _entry(line, pages)]
    return left if sum(map(len, left)) >= MIN_LEFT else []


def _entry(line: str, pages: int) -> int | None:
    found = _ENTRY.match(line.strip())
    return int(found.group(1)) if found and int(found.group(1)) <= pages + FRONT_MATTER else None


def contents_page(lines: list[str], pages: int) -> bool:
    """Whether a page's lines (furniture removed) are a table of contents or a list of figures:
    at least CONTENTS_LINES lines and CONTENTS_SHARE of them are entries (ending in a page
    number of the document, after dotted leaders or a space), and the entries' numbers run in
    order (IN_ORDER of the steps) unless most have dotted leaders. A table of values that end
    in numbers (powers of ten, sizes) runs in no such order or past the document's pages."""
    numbers, leaders = [], 0
    for line in lines:
        if (n := _entry(line, pages)) is not None:
            numbers.append(n)
            leaders += bool(_LEADERS.search(line.strip()))
    if len(numbers) < max(CONTENTS_LINES, CONTENTS_SHARE * len(lines)):
        return False
    steps = list(zip(numbers, numbers[1:], strict=False))
    ordered = sum(a <= b for a, b in steps) >= IN_ORDER * len(steps)
    return ordered or leaders > len(numbers) / 2


def _numbers_page(line: str, number: int, fixed: set[int]) -> bool:
    """Whether every number in `line` can be a page counter: the count after "N /" or "N of"
    when it is one of the `fixed` numbers (the page count, printed or not), or a number at
    most FRONT_MATTER below the page's place in the file (printed labels start after the front
    matter). An invoice number, a date or a year in a sentence is not."""
    found = [int(n) for n in _DIGITS.findall(line)]
    if not found:
        return _only_roman(line)
    totals = {int(m.group(1)) for m in _OUT_OF.finditer(line)} & fixed  # "2 / 233": the 233
    return all(n in totals or number - FRONT_MATTER <= n <= number for n in found)


def _end_numbers(line: str) -> set[int]:
    """The numbers a line starts or ends with ("22 gnuplot 5.4", "Chapter 3. Tides 27")."""
    words = line.split()
    return {int(w) for w in (words[:1] + words[-1:]) if w.isdigit()}


def _only_roman(line: str) -> bool:
    words = line.split()
    return bool(words) and all(_ROMAN.match(w) and len(w) <= 6 for w in words[-1:])


def _shape(line: str) -> str:
    words = _DIGITS.sub("#", " ".join(line.split())).split()
    shaped = " ".join("#" if _ROMAN.match(w) and len(w) <= 6 else w for w in words)
    return _COUNTER.sub("#", shaped)
