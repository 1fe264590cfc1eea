"""Where a span may begin and end: never inside a word or a code token.

The reader's tokenizer cuts words into pieces (`%(asctime)s` is nine of them, `--max-line-length`
seven), and a span it chooses may begin or end on any piece: the tail of a header word, a
directive without its `%(`, a flag without its dashes. `whole` widens a span to the
whitespace-separated tokens it touches, then gives back what only punctuation added: a
sentence's full stop or comma after the last token, and a bracket or quote the span does not
close (or open) itself. A number hyphened to a word ("40-hexdigit") is a word by itself, and
so is each side of a range ("1951-1952") or a slash between words ("Cough/Cool"): measured on
held training questions, widening over those lost right answers."""

from __future__ import annotations

import re

_OPENING = {"(": ")", "[": "]", "{": "}", "<": ">", "‘": "’", "“": "”", "«": "»"}
_CLOSING = {v: k for k, v in _OPENING.items()}
_QUOTES = "\"`'"  # the same mark opens and closes
_TRAILING = ".,;:!?"
_NUMBER = re.compile(r"[-+−]?\d[\d.,]*")


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
    while a > 0 and not text[a - 1].isspace() and not _joint(text, a - 1):
        a -= 1
    # a number joined to a word by a hyphen is a compound ("40-hexdigit", "64-bit"): the
    # number is a whole word of it
    compound = _NUMBER.fullmatch(text[a:end]) and text[end : end + 1] == "-"
    while not compound and b < len(text) and not text[b].isspace() and not _joint(text, b):
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


def _joint(text: str, at: int) -> bool:
    """Whether text[at] joins two words that each stand alone: a slash between two words
    ("Cough/Cool", not the "/" of "/tmp"), a hyphen or dash between two numbers (a range,
    "1951-1952", "61–21")."""
    if at <= 0 or at + 1 >= len(text):
        return False
    before, mark, after = text[at - 1], text[at], text[at + 1]
    if mark == "/":
        return before.isalnum() and after.isalnum()
    return mark in "-–" and before.isdigit() and after.isdigit()


def crosses(text: str, start: int, end: int) -> bool:
    """Whether [start, end) runs across a paragraph break or from one table row (a line with
    ` | ` between its cells) into the next: no answer does."""
    span = text[start:end]
    return "\n\n" in span or ("\n" in span and " | " in text[max(0, start - 200) : end + 200])
