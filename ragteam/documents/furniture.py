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
REPEATS = 0.75  # of a header's kind, the share of distinct numbers at most (chapters repeat)
_DIGITS = re.compile(r"\d+")
_ROMAN = re.compile(r"^[ivxlcdm]+$", re.IGNORECASE)
_COUNTER = re.compile(r"#\s*(?:/|of)\s*#")  # "3 / 12", "Page 3 of 12": one counter
_OUT_OF = re.compile(r"\d\s*(?:/|of)\s*(\d+)")  # the count in "3 / 12", "3 of 12"
# a contents entry: a title, dotted leaders or a space, the page it starts on
_LEADERS = re.compile(r"(?:\.\s*){3,}\d{1,4}$")
_ENTRY = re.compile(r"^\S.*\s(\d{1,4})$")
_NUMBERED = re.compile(r"^(?:\d+\.)+\d*\s+(\S.*)$")  # "2. How to use bzip2", "3.1. Options"
CONTENTS_SHARE = 0.6  # of a page's lines that are entries, at least
CONTENTS_LINES = 5  # entries a contents page holds, at least
IN_ORDER = 0.8  # of the entries' page numbers that do not go down from one to the next


def strip_furniture(pages: list[list[str]]) -> list[list[str]]:
    """Remove running headers and footers: a line at a page's top or bottom that stands there
    on most pages word for word, or whose only difference is the page's number ("Page 3",
    "3 / 12", "xii"; a number the same on most pages, such as the printed page count, counts as
    one); or a chapter's running header (`_Edges.chapter_header`). A line whose numbers are
    something else (an invoice number, a date, a year in a sentence) is body text, and a page
    never loses all its lines. Needs 3 pages."""
    texted = [lines for lines in pages if lines]
    if len(texted) < 3:
        return pages
    edges = _Edges(pages)
    out = []
    for number, lines in enumerate(pages, start=1):
        running = {i for i in _edge(len(lines)) if edges.running(lines[i], number)}
        ends = {0, len(lines) - 1} if lines else set()
        chapter = {i for i in ends - running if edges.chapter_header(lines[i], number)}
        kept = [line for i, line in enumerate(lines) if i not in running | chapter]
        if not kept:  # a page of headers only keeps what is not on every page
            kept = [line for i, line in enumerate(lines) if i not in running] or lines
        out.append(kept)
    return out


def _edge(count: int) -> set[int]:
    """The places of a page's lines that may be running furniture."""
    return set(range(min(EDGE_LINES, count))) | set(range(max(0, count - EDGE_LINES), count))


class _Edges:
    """What a file's page edges hold, counted once: each line, its shape and its first words'
    shape on the EDGE_LINES at each page's top and bottom; the numbers there; the offset of
    printed page numbers from the file's; and the document's numbered headings' titles."""

    def __init__(self, pages: list[list[str]]) -> None:
        self.exact: Counter[str] = Counter()
        self.shapes: Counter[str] = Counter()
        self.prefixes: Counter[str] = Counter()  # on first and last lines only
        self.ends: Counter[str] = Counter()  # first and last lines, word for word
        self.openings: dict[str, set[str]] = {}  # their first two words, by their shape
        numbers: Counter[int] = Counter()
        offsets: Counter[int] = Counter()
        self.titles: set[str] = set()
        for number, lines in enumerate(pages, start=1):
            edges = {lines[i] for i in _edge(len(lines))}
            self.exact.update(edges)
            self.shapes.update({_shape(line) for line in edges})
            numbers.update({int(n) for line in edges for n in _DIGITS.findall(line)})
            firsts = set(lines[:1] + lines[-1:])
            self.ends.update(firsts)
            self.prefixes.update({_prefix(line) for line in firsts})
            for line in firsts:
                self.openings.setdefault(_prefix(line), set()).add(_opening(line))
            ends = {n for line in firsts for n in _end_numbers(line)}
            offsets.update({number - n for n in ends if 0 <= number - n <= FRONT_MATTER})
            self.titles.update(m.group(1) for line in lines if (m := _NUMBERED.match(line)))
        self.most = sum(1 for lines in pages if lines) / 2
        self.fixed = {n for n, seen in numbers.items() if seen > self.most} | {len(pages)}
        self.offset = next((d for d, seen in offsets.most_common(1) if seen > self.most), None)

    def running(self, line: str, number: int) -> bool:
        """A header or footer on most pages: word for word, or but for the page's number."""
        return self.exact[line] > self.most or (
            self.shapes[_shape(line)] > self.most and _numbers_page(line, number, self.fixed)
        )

    def chapter_header(self, line: str, number: int) -> bool:
        """A page's first or last line that names the chapter it stands in, by one of three
        layouts: it starts or ends with the page's printed number (the file's page less the
        offset most pages show) and its shape or its first words' shape (with a number:
        "Chapter 3:") stands on FEW pages' first or last lines ("Chapter 1: Introduction 1",
        gnuplot's "22 gnuplot 5.4"); its first words' shape, with a number, begins most pages,
        its numbers repeat from page to page and more words follow ("CHAPTER 3. CHOOSING… 3.2.
        ...", the page number at the other edge; not "Invoice 1003" on each page); or it
        stands word for word on FEW pages' first or last lines and is the title of a numbered
        heading in the document ("How to use bzip2" after "2. How to use bzip2")."""
        prefix = _prefix(line)
        numbered = "#" in prefix
        if (
            self.offset is not None
            and number - self.offset in _end_numbers(line)
            and (self.shapes[_shape(line)] >= FEW or (numbered and self.prefixes[prefix] >= FEW))
        ):
            return True
        if numbered and self.prefixes[prefix] > self.most and len(line.split()) > 2:
            # a chapter's number, on page after page, not each page's own ("Invoice 1003")
            return len(self.openings[prefix]) <= REPEATS * self.prefixes[prefix]
        return self.ends[line] >= FEW and line in self.titles


MIN_LEFT = 200  # characters of a contents page's other lines kept as text, at least


def without_contents(lines: list[str], pages: int) -> list[str] | None:
    """A page's lines with its contents entries left out when it is a contents page (its
    other lines, prose that shares the page, kept if they hold MIN_LEFT characters, else
    nothing), or None when it is not one."""
    if not contents_page(lines, pages):
        return None
    left = [line for line in lines if not _entry(line, pages)]
    return left if sum(map(len, left)) >= MIN_LEFT else []


LEADER_RUN = 3  # dotted-leader entries in a row that are a chapter's own contents, at least


def without_leaders(lines: list[str], pages: int) -> list[str] | None:
    """A page's lines without the contents list a chapter's first page may open with (bzip2's
    "Table of Contents" under each chapter's title): LEADER_RUN or more entries in a row with
    dotted leaders ("2.4. OPTIONS . . . . 3"; an entry wrapped onto two lines counts as one),
    and the short caption over them ("Table of Contents", no number in it, not the page's first
    line). None when the page holds no such run."""
    drop: set[int] = set()
    run: list[int] = []
    for i, line in enumerate([*lines, ""]):
        if _leader(line, pages) or (
            run and _NUMBERED.match(line) and _leader(_at(lines, i + 1), pages)
        ):
            run.append(i)
            continue
        if sum(_leader(lines[j], pages) for j in run) >= LEADER_RUN:
            drop.update(run)
            caption = run[0] - 1
            if (
                caption > 0
                and len(lines[caption].split()) <= 4
                and not _DIGITS.search(lines[caption])
            ):
                drop.add(caption)
        run = []
    return [line for i, line in enumerate(lines) if i not in drop] if drop else None


def _at(lines: list[str], i: int) -> str:
    return lines[i] if i < len(lines) else ""


def _leader(line: str, pages: int) -> bool:
    return bool(_LEADERS.search(line.strip())) and _entry(line, pages) is not None


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


def _prefix(line: str) -> str:
    """The shape of a line's first two words ("Chapter #:", "CHAPTER #.")."""
    return " ".join(_shape(line).split()[:2])


def _opening(line: str) -> str:
    return " ".join(line.split()[:2])


def _only_roman(line: str) -> bool:
    words = line.split()
    return bool(words) and all(_ROMAN.match(w) and len(w) <= 6 for w in words[-1:])


def _shape(line: str) -> str:
    words = _DIGITS.sub("#", " ".join(line.split())).split()
    shaped = " ".join("#" if _ROMAN.match(w) and len(w) <= 6 else w for w in words)
    return _COUNTER.sub("#", shaped)
