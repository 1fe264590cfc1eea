"""Where a span may begin and end: never inside a word or a code token.

The reader's tokenizer cuts words into pieces (`%(asctime)s` is nine of them, `--max-line-length`
seven), and a span it chooses may begin or end on any piece: the tail of a header word, a
directive without its `%(`, a flag without its dashes. `whole` widens a span to the
whitespace-separated tokens it touches, then gives back what only punctuation added: a
sentence's full stop or comma after the last token, and a bracket or quote the span does not
close (or open) itself."""

from __future__ import annotations

_OPENING = {"(": ")", "[": "]", "{": "}", "<": ">", "‘": "’", "“": "”", "«": "»"}
_CLOSING = {v: k for k, v in _OPENING.items()}
_QUOTES = "\"`'"  # the same mark opens and closes
_TRAILING = ".,;:!?"


def _balanced(text: str, bracket: str) -> bool:
    """Whether `text` opens as many of `bracket`'s kind as it closes (a quote that opens and
    closes alike: whether it stands an even number of times)."""
    if bracket in _QUOTES:
        return text.count(bracket) % 2 == 0
    opening = _CLOSING.get(bracket, bracket)
    closing = _OPENING.get(bracket, bracket)
    return text.count(opening) == text.count(closing)


def whole(text: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) of `text` widened to whole whitespace-separated tokens, with an unmatched
    bracket or quote and a trailing full stop, comma, colon or semicolon that the widening
    brought trimmed again (never narrower than the span given)."""
    if not 0 <= start < end <= len(text):
        return start, end
    a, b = start, end
    while a > 0 and not text[a - 1].isspace():
        a -= 1
    while b < len(text) and not text[b].isspace():
        b += 1
    changed = True
    while changed and b > end:
        changed = False
        last = text[b - 1]
        if (
            last in _TRAILING
            or (last in _CLOSING or last in _QUOTES)
            and not _balanced(text[a:b], last)
        ):
            b, changed = b - 1, True
    changed = True
    while changed and a < start:
        changed = False
        first = text[a]
        if (first in _OPENING or first in _QUOTES) and not _balanced(text[a:b], first):
            a, changed = a + 1, True
    return a, b
