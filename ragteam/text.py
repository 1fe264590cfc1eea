"""Plain-text helpers every floor may use: where the sentences of a text begin and end."""

from __future__ import annotations

import re

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n+")


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) spans of the sentences of `text`, stripped, in order."""
    spans, start = [], 0
    for cut in [*(m for m in _SENTENCE.finditer(text)), None]:
        end = cut.start() if cut else len(text)
        piece = text[start:end]
        lead = len(piece) - len(piece.lstrip())
        if piece.strip():
            spans.append((start + lead, start + lead + len(piece.strip())))
        start = cut.end() if cut else len(text)
    return spans


def sentence_around(text: str, start: int, end: int) -> tuple[int, int]:
    """The (start, end) of the sentence of `text` that holds the span [start, end) (the
    sentences it crosses, joined, when it crosses a boundary)."""
    inside = [(a, b) for a, b in sentences(text) if a < end and b > start]
    if not inside:
        return start, end
    return min(inside[0][0], start), max(inside[-1][1], end)
