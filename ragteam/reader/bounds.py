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
    brought trimmed again (never narrower than the span given, but for one pair of quotes
    around all of it)."""
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
    return _unquoted(text, a, b)


_QUOTE_PAIRS = {"“": "”", "‘": "’", "«": "»", '"': '"', "'": "'", "`": "`"}


def _unquoted(text: str, a: int, b: int) -> tuple[int, int]:
    """[a, b) without one pair of quotes that encloses all of it: a name quoted in the text
    ("“default_rgb.icc”") is answered as the name (brackets stay: "(0:1)" is what it says)."""
    if b - a > 2 and _QUOTE_PAIRS.get(text[a]) == text[b - 1]:
        inner = text[a + 1 : b - 1]
        if text[a] not in inner and text[b - 1] not in inner:
            return a + 1, b - 1
    return a, b


def _joint(text: str, at: int) -> bool:
    """Whether text[at] joins two words that each stand alone: a slash between two words
    ("Cough/Cool", not the "/" of "/tmp"), a hyphen or dash between two numbers (a range,
    "1951-1952", "61–21"), an equals sign between a setting and its value."""
    if at <= 0 or at + 1 >= len(text):
        return False
    before, mark, after = text[at - 1], text[at], text[at + 1]
    if mark == "/":
        return before.isalnum() and after.isalnum()
    if mark == "=":  # a setting and its value ("\\heavyrulewidth=.08em", "--jobs=4")
        return not before.isspace() and not after.isspace()
    return mark in "-–" and before.isdigit() and after.isdigit()


def crosses(text: str, start: int, end: int) -> bool:
    """Whether [start, end) runs across a paragraph break or from one table row (a line with
    ` | ` between its cells) into the next: no answer does."""
    span = text[start:end]
    return "\n\n" in span or ("\n" in span and " | " in text[max(0, start - 200) : end + 200])


# a question that offers its answer among its own words: "A or B", "between A and B", "A and
# B ... which", two sentences (a statement, then which of its things)
_CHOICE = re.compile(r"\b(?:or|between|either|whether)\b|,\s*which\b|[.;]\s+\w", re.IGNORECASE)


def asked_words(question: str) -> frozenset[str] | None:
    """The question's own words, against which a span that only repeats them is no answer
    (`echoes`); None for a question that offers its answer among them (a choice)."""
    from ragteam.common.metrics import normalize_answer

    if _CHOICE.search(question.strip().rstrip("?.!")):
        return None
    return frozenset(normalize_answer(question).split())


def echoes(asked: frozenset[str] | None, span: str) -> bool:
    """Whether every word of `span` is a word of the question (`asked_words`): "What is the
    default core.bigFileThreshold?" is not answered "core.bigFileThreshold"."""
    from ragteam.common.metrics import normalize_answer

    if asked is None:
        return False
    said = normalize_answer(span).split()
    return bool(said) and all(w in asked for w in said)
