"""Structure-aware passages: a unit (page, slide or section) is cut on paragraphs, then
sentences, then words, to a token budget counted by the embedding model's own tokenizer; a
passage never crosses a unit, so it has one page, slide and section. A passage is an exact
span of its unit's text (`start`, `end`), and may begin with the previous passage's last
sentence when that is short (the overlap)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ragteam.documents.base import Unit

TokenCount = Callable[[str], int]
_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=[\"'(\[A-Z0-9])")


@dataclass(frozen=True)
class Piece:
    """One passage's text and where it stands: its unit and its character span there."""

    text: str
    unit: Unit
    start: int
    end: int


def _spans(text: str, pattern: re.Pattern[str], start: int, end: int) -> list[tuple[int, int]]:
    spans, at = [], start
    for match in pattern.finditer(text, start, end):
        if match.start() > at:
            spans.append((at, match.start()))
        at = match.end()
    if at < end:
        spans.append((at, end))
    return spans


def _word_windows(text: str, start: int, end: int, budget: int, count: TokenCount) -> list:
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text[start:end])]
    windows: list[tuple[int, int]] = []
    first = 0
    while first < len(words):
        last = first + 1
        # grow while it fits; a single word over budget stands alone
        while (
            last < len(words)
            and count(text[start + words[first][0] : start + words[last][1]]) <= budget
        ):
            last += 1
        windows.append((start + words[first][0], start + words[last - 1][1]))
        first = last
    return windows


def segments(text: str, budget: int, count: TokenCount) -> list[tuple[int, int, int]]:
    """(start, end, tokens) of the smallest pieces needed: paragraphs, else sentences, else
    word windows, each within `budget` tokens."""
    out = []
    for p_start, p_end in _spans(text, _PARAGRAPH, 0, len(text)):
        tokens = count(text[p_start:p_end])
        if tokens <= budget:
            out.append((p_start, p_end, tokens))
            continue
        for s_start, s_end in _spans(text, _SENTENCE, p_start, p_end):
            tokens = count(text[s_start:s_end])
            if tokens <= budget:
                out.append((s_start, s_end, tokens))
            else:
                for w_start, w_end in _word_windows(text, s_start, s_end, budget, count):
                    out.append((w_start, w_end, count(text[w_start:w_end])))
    return out


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
