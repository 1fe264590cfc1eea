"""Questions that ask for several things ("which options does -dFitPage set?", "which two
rule commands", "besides openpgp, which other values"): when the answer so far is one item of
a list written out in its passage (`-b, -j, and -e`, `UK, US, DE and ZA`, `"x509", "ssh"`), the
answer is the whole list. The reader was trained on answers of one item; people ask for all
of them. A rule on the question's grammar and the list's punctuation, no threshold: the answer
keeps the score of the span it grew from (chosen on the manuals set, docs/benchmarks.md §62)."""

from __future__ import annotations

import re
from dataclasses import replace

from ragteam.common.text import sentence_around
from ragteam.reader.tokens import code_tokens
from ragteam.types import Span

# "which/what" then a number of things, or a plural noun (after up to three words that qualify
# it) before the verb it governs, in the plural: "which options does X set", "which transport
# classes got", "which two parsing options should"; not "which attrs release added" (a name
# ending in s qualifying a singular) nor "which option keeps lines"
_COUNT = r"(?:two|three|four|five|six|several|both|all)"
_VERB = (  # auxiliaries, and common verbs in their plural (or past) form
    r"(?:do|does|did|are|were|should|can|could|would|will|must|may|might|have|had|got|"
    r"come|appear|count|need|take|accept|exist|bring|give|set|make|let|get|go|run|work|"
    r"turn|keep|change|control|affect|apply|belong)"
)
_ASKS = re.compile(
    rf"\b(?:which|what)\s+(?:other\s+)?(?:{_COUNT}\b|"
    rf"(?:[\w'.-]+\s+){{0,3}}?([a-z]{{3,}}s)\s+{_VERB}\b)|\b(?:which|what)\s+are\b",
    re.I,
)
_NOT_PLURAL = frozenset(  # words ending in s that are no plural noun
    "does has was is its this thus plus less unless always perhaps whereas yes status "  # noqa: SIM905
    "focus bonus series process access address class pass glass bus".split()
)
# between two items: a comma (", and" / ", or" closing the list) or "and" / "or"
_SEP_RIGHT = re.compile(r",\s*(?:(and|or)\s+)?|\s+(and|or)\s+")
_SEP_LEFT = re.compile(r"(?:,\s*(?:(and|or)\s+)?|\s+(and|or)\s+)$")
_ARTICLE = re.compile(r"(?:the|a|an)\s+", re.I)
_QUOTES = {'"': '"', "'": "'", "`": "`", "\u2018": "\u2019", "\u201c": "\u201d"}
MAX_ITEMS = 12
MAX_ITEM_WORDS = 3  # an item is a name or a short phrase: a longer span is prose, not grown
_GLOSS = re.compile(r"\s*\([^()\n]{1,40}\)")  # an item's gloss: "DE (Germany)"


def asks_many(question: str) -> bool:
    """Whether the question asks which things (plural) or how many of them."""
    for m in _ASKS.finditer(question):
        noun = (m.group(1) or "").lower()
        if not noun or noun not in _NOT_PLURAL and not noun.endswith("ss"):
            return True
    return False


def list_answer(question: str, text: str, span: Span) -> Span | None:
    """`span` (over the passage whose text is `text`) grown to the list it is an item of,
    when the question asks for several things; None when it asks for one, the span is a
    heading's or a yes/no reading, or it stands in no list of items shaped like it."""
    if span.kind != "span" or span.heading or not asks_many(question):
        return None
    start, end = was = _quoted(text, span.start, span.end)
    words = _items(text[start:end])
    if not words or max(len(w.split()) for w in words) > MAX_ITEM_WORDS:
        return None
    code = _is_code(text[start:end])
    first, last = len(words[0].split()), len(words[-1].split())
    if not _joined(text[start:end]):  # a list the span closes with "and" ends there
        end = _grow_right(text, end, last, code)
    start = _grow_left(text, start, first, code)
    if (start, end) == was:
        return None
    if not (code or _joined(text[start:end])):  # a list of plain words says "and" or "or"
        return None
    lo, hi = sentence_around(text, start, end)
    return replace(
        span, start=start, end=end, text=text[start:end], sentence=text[lo:hi], sentence_start=lo
    )


def _quoted(text: str, start: int, end: int) -> tuple[int, int]:
    """The span with the quotes or backticks around it, if it stands in a pair."""
    if start > 0 and end < len(text) and _QUOTES.get(text[start - 1]) == text[end]:
        return start - 1, end + 1
    return start, end


def _items(said: str) -> list[str]:
    """The items the span already holds (split at its own separators)."""
    return [p for p in _SEP_RIGHT.split(said) if p and p.lower() not in {"and", "or"}]


def _joined(said: str) -> bool:
    """Whether the span's own items are joined by "and" or "or"."""
    return any(m.group(1) or m.group(2) for m in _SEP_RIGHT.finditer(said))


def _is_code(said: str) -> bool:
    """Whether the span's item is written as code or quoted (its list's items must be too)."""
    bare = said.strip()
    return bool(bare) and (bare[0] in _QUOTES or bool(code_tokens(bare)))


def _item(text: str, at: int, words: int, code: bool) -> int | None:
    """The end of an item of at most `words` words (an article before it not counted) starting
    at `at`, shaped like the span's (code or quoted, or not), or None: the longest that is."""
    for n in range(words, 0, -1):
        if (end := _item_of(text, at, n, code)) is not None:
            return end
    return None


def _item_of(text: str, at: int, words: int, code: bool) -> int | None:
    """The end of an item of exactly `words` words starting at `at` (see `_item`)."""
    lead = _ARTICLE.match(text, at)
    at = lead.end() if lead else at
    found = list(re.finditer(r"\S+", text[at : at + 200]))[:words]
    if len(found) < words or found[0].start() != 0:
        return None
    end = at + found[-1].end()
    while end > at and text[end - 1] in ",.;:!?":
        end -= 1
    if end > at and text[end - 1] == ")" and text[at:end].count("(") < text[at:end].count(")"):
        end -= 1  # a parenthesis the item closes is the sentence's, not the item's
    item = text[at:end]
    if not item or "," in item or re.search(r"[.;:!?]\s|[\n\[\]]", item):
        return None
    if item.count("(") != item.count(")"):
        return None
    if {w.lower() for w in item.split()} & {"and", "or"} or _is_code(item) != code:
        return None
    return end


def _grow_right(text: str, end: int, words: int, code: bool) -> int:
    """The end of the list after the span's last item (an item after "and"/"or" is its
    last); an item's gloss in parentheses stands inside the list, not at its end."""
    for _ in range(MAX_ITEMS):
        gloss = _GLOSS.match(text, end)
        sep = _SEP_RIGHT.match(text, gloss.end() if gloss else end)
        if sep is None:
            return end
        item_end = _item(text, sep.end(), words, code)
        if item_end is None:
            return end
        end = item_end
        if sep.group(1) or sep.group(2):
            return end
    return end


def _grow_left(text: str, start: int, words: int, code: bool) -> int:
    """The start of the list before the span's first item."""
    for n in range(MAX_ITEMS):
        window = text[max(0, start - 8) : start]
        sep = _SEP_LEFT.search(window)
        joins = sep is not None and bool(sep.group(1) or sep.group(2))
        if sep is None or (n and joins):  # "and" only between the last two items
            return start
        before = start - (len(window) - sep.start())
        found = _item_before(text, before, words, code)
        if found is None:
            return start
        start = found
    return start


def _item_before(text: str, before: int, words: int, code: bool) -> int | None:
    """The start of the longest item of at most `words` words ending at `before`."""
    head = text[max(0, before - 200) : before]
    runs = list(re.finditer(r"\S+", head))
    for n in range(min(words, len(runs)), 0, -1):
        at = before - len(head) + runs[-n].start()
        if _item_of(text, at, n, code) == before:
            return at
    return None
