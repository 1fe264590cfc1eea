"""Questions that ask for a setting's default ("What frame does a Verbatim environment get by
default?", "Where does bash save the command history by default?"): the answer is the value
the reference entry states as its default ("(Default: none)", "Default: 10", "The default
value is ~/.bash_history", "defaults to 30"), not the words of the entry the reader may rank
first. The entry is the one the reader's best span stands in: the first default stated from
that span on, in its paragraph, else the last one stated in the BEFORE characters before it
(a reference entry that heads with its type and default: "net_inc Type: number Default: 10").
A rule on the question's words and the statement's shape, no threshold: the answer keeps the
best span's score (chosen on the manuals set, docs/benchmarks.md §61)."""

from __future__ import annotations

import re
from dataclasses import replace

from ragteam.reader.spans import Span
from ragteam.text import sentence_around

BEFORE = 300  # characters before the best span where its entry's default may stand
MAX_VALUE = 60  # characters: a longer "value" is a sentence, not a setting's default
_ASKS = re.compile(r"\bdefault(?:s|ed)?\b", re.I)
# "(Default: none)", "Default: 10", "default value: x", "The default (value) is x", "defaults
# to x"; the value runs to a closing bracket, a semicolon, a line's end or a full stop
_STATES = re.compile(
    r"\bdefault(?:\s+value)?\s*(?::|=|\bis\b)\s*|\bdefaults\s+to\s+",
    re.I,
)
_VALUE = re.compile(r"[^\s)(;,][^)\n;]*?(?=\s*(?:\)|;|\n|\.\s|\.$|,\s|$))")


def asks_default(question: str) -> bool:
    return _ASKS.search(question) is not None


def stated_defaults(text: str) -> list[tuple[int, int]]:
    """(start, end) in `text` of each value a default is stated as."""
    found = []
    for m in _STATES.finditer(text):
        value = _VALUE.match(text, m.end())
        if value is None:
            continue
        end = _closed(text, value.start(), value.end())
        if 0 < end - value.start() <= MAX_VALUE:
            found.append((value.start(), end))
    return found


def _closed(text: str, start: int, end: int) -> int:
    """`end`, moved past the closing bracket of a list or a set the value opens and does not
    close ("[a, b]" is one value, not "[a")."""
    for opening, closing in ("[]", "{}"):
        if text.count(opening, start, end) > text.count(closing, start, end):
            at = text.find(closing, end, start + MAX_VALUE + 1)
            end = at + 1 if at >= 0 else end
    return end


def default_answer(question: str, text: str, best: Span) -> Span | None:
    """The default stated for the entry of `best` (the reader's best span over the passage
    whose text is `text`), as a span with `best`'s score; None when the question asks for no
    default, `best` is a heading's or no default is stated there, or `best` already stands in
    that value."""
    if not asks_default(question) or best.kind != "span" or best.heading:
        return None
    values = stated_defaults(text)
    paragraph_end = text.find("\n\n", best.start)
    paragraph_end = len(text) if paragraph_end < 0 else paragraph_end
    after = [v for v in values if best.start <= v[0] < paragraph_end]
    before = [v for v in values if best.start - BEFORE <= v[0] < best.start]
    chosen = after[0] if after else before[-1] if before else None
    if chosen is None:
        return None
    lo, hi = chosen
    if lo <= best.start < hi and best.text.strip(".,;: ") in text[lo:hi]:
        return None  # the reader's span is (part of) that value already: its extent stands
    start, end = sentence_around(text, lo, hi)
    return replace(
        best, start=lo, end=hi, text=text[lo:hi], sentence=text[start:end], sentence_start=start
    )
