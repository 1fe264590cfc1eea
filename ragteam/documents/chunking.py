"""Structure-aware passages: a unit (page, slide or section) is cut on paragraphs, then
sentences (a paragraph of table rows on its rows: a row is never cut), then words, to a token
budget counted by the embedding model's own tokenizer; a passage never crosses a unit, so it
has one page, slide and section. A passage is an exact span of its unit's text (`start`,
`end`), and may begin with the previous passage's last sentence when that is short (the
overlap)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from ragteam.documents.base import Unit
from ragteam.locator import Locator

TokenCount = Callable[[str], int]
_PARAGRAPH = re.compile(r"\n\s*\n")
_LINE = re.compile(r"\n")
# a span longer than this many characters a token is not counted whole (it cannot fit, and
# counting it would tokenize megabytes at once): it is cut first
HUGE_CHARS_PER_TOKEN = 64
_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=[\"'(\[A-Z0-9])")
_ROW = re.compile(r"\s\|\s|\s\|$|^\|\s")  # a cell border as the converters write a table row
ROWS = 0.5  # the share of a paragraph's lines that must be table rows for it to be a table
# how passages are cut: recorded with a sync's settings, so that a change re-cuts every file
CHUNKING_VERSION = 2


@dataclass(frozen=True)
class Piece:
    """One passage's text and where it stands: its unit and its character span there."""

    text: str
    unit: Unit
    start: int
    end: int

    def locator(self, source: str = "") -> Locator:
        """Where this passage stands in its file (`source`: the file's path in its folder)."""
        return replace(self.unit.where, source=source, start=self.start, end=self.end)


def _spans(text: str, pattern: re.Pattern[str], start: int, end: int) -> list[tuple[int, int]]:
    spans, at = [], start
    for match in pattern.finditer(text, start, end):
        if match.start() > at:
            spans.append((at, match.start()))
        at = match.end()
    if at < end:
        spans.append((at, end))
    return spans


def _words(text: str, budget: int) -> list[tuple[int, int]]:
    """(start, end) of each whitespace-separated word of `text`; a word longer than `budget`
    characters (base64, a minified line) cut into pieces of `budget` characters, each of
    which is at most `budget` tokens (a token is at least one character)."""
    spans = []
    for m in re.finditer(r"\S+", text):
        a, b = m.span()
        spans += [(at, min(b, at + budget)) for at in range(a, b, max(1, budget))]
    return spans


def _word_windows(text: str, start: int, end: int, budget: int, count: TokenCount) -> list:
    """Windows of whole words within `budget` tokens, each word counted once (a word-piece
    tokenizer splits on whitespace first, so a window's tokens are its words' tokens); a word
    too long for one window is cut by characters (`_words`)."""
    base = count("")
    windows: list[tuple[int, int, int]] = []
    first = last = used = 0
    part = text[start:end]
    for a, b in _words(part, budget):
        tokens = max(1, count(part[a:b]) - base)
        if used and used + tokens > budget:
            windows.append((start + first, start + last, used))
            used = 0
        if not used:
            first = a
        last, used = b, used + tokens
    if used:
        windows.append((start + first, start + last, used))
    return windows


def segments(text: str, budget: int, count: TokenCount) -> list[tuple[int, int, int]]:
    """(start, end, tokens) of the smallest pieces needed: paragraphs, else sentences, else
    word windows, each within `budget` tokens. A paragraph too long to be worth counting
    whole (a log or a CSV without blank lines) is cut on its lines first."""
    out = []
    for span in _spans(text, _PARAGRAPH, 0, len(text)):
        huge = span[1] - span[0] > HUGE_CHARS_PER_TOKEN * budget
        levels = (_LINE, _SENTENCE) if huge or _is_table(text, span) else (_SENTENCE,)
        out += _fitted(text, span, budget, count, levels)
    return out


def _is_table(text: str, span: tuple[int, int]) -> bool:
    """Whether the paragraph at `span` is table rows ("a4 | 8.3 x 11.7 | 210 x 297"): at least
    ROWS of its lines (and two) hold a cell border."""
    lines = text[span[0] : span[1]].split("\n")
    rows = sum(1 for line in lines if _ROW.search(line.strip()))
    return rows >= 2 and rows >= ROWS * len(lines)


def _fitted(
    text: str,
    span: tuple[int, int],
    budget: int,
    count: TokenCount,
    levels: tuple[re.Pattern[str], ...],
) -> list[tuple[int, int, int]]:
    start, end = span
    if end - start <= HUGE_CHARS_PER_TOKEN * budget:
        tokens = count(text[start:end])
        if tokens <= budget:
            return [(start, end, tokens)]
    if not levels:
        return _word_windows(text, start, end, budget, count)
    return [
        piece
        for part in _spans(text, levels[0], start, end)
        for piece in _fitted(text, part, budget, count, levels[1:])
    ]


def chunk_unit(unit: Unit, budget: int, count: TokenCount, overlap: int) -> list[Piece]:
    """Greedy packing of a unit's segments into passages of at most `budget` tokens."""
    pieces: list[Piece] = []
    parts = segments(unit.text, budget, count)
    i = 0
    while i < len(parts):
        first, used = i, parts[i][2]
        if pieces and i > 0 and parts[i - 1][2] <= overlap and parts[i - 1][2] + used <= budget:
            first, used = i - 1, used + parts[i - 1][2]
        j = i + 1
        while j < len(parts) and used + parts[j][2] <= budget:
            used += parts[j][2]
            j += 1
        start, end = parts[first][0], parts[j - 1][1]
        pieces.append(Piece(unit.text[start:end], unit, start, end))
        i = j
    return pieces


def chunk(units: list[Unit], budget: int, count: TokenCount, overlap: int = 24) -> list[Piece]:
    """Every unit cut into passages; `budget <= 0` keeps each unit whole."""
    if budget <= 0:
        return [Piece(u.text, u, 0, len(u.text)) for u in units if u.text.strip()]
    return [piece for unit in units for piece in chunk_unit(unit, budget, count, overlap)]
