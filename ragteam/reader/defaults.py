"""Questions that ask for a setting's default ("What frame does a Verbatim environment get by
default?", "Where does bash save the command history by default?"): the answer is the value
the reference entry states as its default ("(Default: none)", "Default: 10", "The default
value is ~/.bash_history", "defaults to 30"), not the words of the entry the reader may rank
first. The entry is the one the reader's best span stands in: the first default stated from
that span on, in its paragraph, else the last one stated in the BEFORE characters before it
(a reference entry that heads with its type and default: "net_inc Type: number Default: 10").
A rule on the question's words and the statement's shape, no threshold: the answer keeps the
best span's score (chosen on the manuals set, docs/benchmarks.md §61).

A question that names its entry as code ("the default core.bigFileThreshold", "of
-dBlackThresholdL", "\\heavyrulewidth") is answered from that entry wherever the reader's best
span stands (`named_default`): the passage whose innermost heading names it, else one whose
text does, and the first default stated after the name, before the next entry's name; where
none is stated, the value the entry is set to in code ("\\heavyrulewidth=.08em").

A question that names its setting in words ("What web server does git instaweb use by
default?", "How many rows ... if I don't specify it?") is answered by the default stated
among the passages read whose statement says most of the question (`said_default`), where it
says more of it than the best span's entry's default or the best span itself does
(docs/benchmarks.md §64)."""

from __future__ import annotations

import re
from dataclasses import replace

from ragteam.common.text import rarity, sentence_around, stems, weighed
from ragteam.reader.headings import LIGHT_VERBS, releases
from ragteam.reader.spans import Span
from ragteam.reader.tokens import code_tokens
from ragteam.reader.view import heading_path
from ragteam.types import Passage

BEFORE = 300  # characters before the best span where its entry's default may stand
AFTER = 600  # characters after an entry's name where its default may stand
MAX_VALUE = 60  # characters: a longer "value" is a sentence, not a setting's default
# "by default", "the default X", and the ways of saying it without the word ("if I don't
# specify it", "when omitted", "if unspecified")
_ASKS = re.compile(
    r"\bdefault(?:s|ed)?\b|\bif (?:i|you|we|one) (?:do not|don't|dont|does not|doesn't) "
    r"(?:specify|set|give|pass|choose|say)\b|\bif (?:not |un)(?:specified|set|given)\b|"
    r"\bwhen (?:omitted|not (?:specified|set|given))\b|\bwithout (?:specifying|setting)\b",
    re.I,
)
# "(Default: none)", "Default: 10", "default value: x", "The default (value) is x", "defaults
# to x", "The default server when using instaweb is x" (up to five words between), "the default
# epsilon limit (x)" (up to three)
_STATES = re.compile(
    r"\bdefault(?:\s+value)?\s*(?::|=|\bis\b)\s*|\bdefaults\s+to\s+|"
    r"\bdefault\s+(?:(?!is\b|are\b)[\w-]+\s+){1,5}?(?:is|are)\s+|"
    r"\bdefault\s+(?:[\w-]+\s+){0,3}?\(\s*",
    re.I,
)
# "=VALUE" after an entry's name in code, the value to the line's end
_SET = re.compile(rf"\s*=\s*([^\s=][^\n]{{0,{MAX_VALUE}}}?)\s*(?:\n|$)")
_SAYS_NOTHING = LIGHT_VERBS | stems("default defaults value use uses")
# "(not eps)", "except eps", "other than eps": a word whose statement is not the one asked for
_RULED_OUT = re.compile(
    r"(?:\((?:not|except|excluding)|\b(?:except|excluding|other than))\s+([\w.-]+)", re.I
)
_HOW_MUCH = re.compile(r"\bhow (?:many|much|big|large|long|wide|high|tall|small|often)\b", re.I)
_NUMBER = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve)\b", re.I)
_ENTRY = re.compile(r"(?:^|\n\n)(\S+)(?=\n\n|$)")  # a paragraph of one word: an entry's name
# the value runs to a closing bracket, a semicolon, a line's end, a comma or a full stop
_VALUE = re.compile(r"[^\s)(;,][^)\n;]*?(?=\s*(?:\)|;|\n|\.\s|\.$|,\s|$))")


def asks_default(question: str) -> bool:
    return _ASKS.search(question) is not None


def stated_defaults(text: str) -> list[tuple[int, int]]:
    """(start, end) in `text` of each value a default is stated as."""
    return [(lo, hi) for _, lo, hi in statements(text)]


def statements(text: str) -> list[tuple[int, int, int]]:
    """(said, start, end) of each default `text` states: where its statement begins ("The
    default value is"), and the value's extent (which may stand in a paragraph of its own, as
    a converted `<code>` value does: "The default value is\n\nbold,white,red")."""
    found = []
    for m in _STATES.finditer(text):
        value = _VALUE.match(text, m.end())
        if value is None:
            continue
        end = _closed(text, value.start(), value.end())
        if 0 < end - value.start() <= MAX_VALUE:
            found.append((m.start(), value.start(), end))
    return found


def _closed(text: str, start: int, end: int) -> int:
    """`end`, moved past the closing bracket of a list or a set the value opens and does not
    close ("[a, b]" is one value, not "[a")."""
    for opening, closing in ("[]", "{}"):
        if text.count(opening, start, end) > text.count(closing, start, end):
            at = text.find(closing, end, start + MAX_VALUE + 1)
            end = at + 1 if at >= 0 else end
    return end


def said_default(
    question: str, passages: list[Passage], scores: dict[str, float], best: Span | None
) -> Span | None:
    """The default stated among `passages` whose words say most of the question (its
    sentence and its passage's innermost heading, `_context`; each word weighed by its rarity
    over the passages, the words asking for a default and light verbs aside, a word the
    question rules out counting against), where they say more of it than the words of the
    answer so far (the best span's entry's default, `default_answer`, else the best span; as
    many, where that span states no default); that answer otherwise (None: the best span
    stands). A question asking how many, how big or how long takes only values with a
    number."""
    if not asks_default(question) or best is None or best.kind != "span" or best.heading:
        return None
    by_id = {p.id: p for p in passages}
    numeric = _HOW_MUCH.search(question) is not None
    entry = default_answer(question, by_id[best.passage_id].text, best)
    if entry is not None and numeric and not _NUMBER.search(entry.text):
        entry = None  # "how many rows": not "defaults to the number of rows"
    asked = stems(_ASKS.sub(" ", question)) - _SAYS_NOTHING  # not the words asking for it
    ruled_out = {w for m in _RULED_OUT.finditer(question) for w in stems(m.group(1))}
    asked -= ruled_out
    weight = rarity([stems(p.text) & asked for p in passages])

    def says(passage: Passage, said: int, lo: int, hi: int) -> float:
        words = stems(_context(passage, said, lo, hi))
        against = len(words & ruled_out) * max(weight.values(), default=0.0)
        return weighed(words & asked, weight) - against

    stated = [
        (says(p, said, lo, hi), p, said, lo, hi)
        for p in passages
        for said, lo, hi in statements(p.text)
        if not numeric or _NUMBER.search(p.text[lo:hi])
    ]
    if not stated:
        return entry
    so_far = entry or best
    top, passage, said, lo, hi = max(stated, key=lambda c: c[0])
    standing = says(by_id[so_far.passage_id], so_far.sentence_start, so_far.start, so_far.end)
    is_stated = entry is not None or any(
        p.id == best.passage_id and lo_ <= best.start < hi_ for _, p, _, lo_, hi_ in stated
    )
    if top <= 0 or top < standing or (is_stated and top == standing):
        return entry  # a stated default wins a tie only over a span that states none
    text = passage.text
    start, end = sentence_around(text, said, hi)
    score = scores.get(passage.id, 0.0)
    return Span(passage.id, lo, hi, text[lo:hi], text[start:end], start, score)


def _context(passage: Passage, said: int, lo: int, hi: int) -> str:
    """The words a default at [lo, hi) of `passage`, stated from `said` on, is stated with:
    its passage's innermost heading and its sentence, and the sentence before where its own
    names nothing but the value ("... set the size of the text block. The default is 79 by
    24.")."""
    text = passage.text
    start, end = sentence_around(text, min(said, lo), hi)
    own = text[start:lo] + " " + text[hi:end]
    if start and not stems(own) - _SAYS_NOTHING:
        start = sentence_around(text, max(0, start - 2), max(0, start - 1))[0]
    return heading_path(passage).split(" > ")[-1] + " " + text[start:end]


def default_answer(question: str, text: str, best: Span) -> Span | None:
    """The default stated for the entry of `best` (the reader's best span over the passage
    whose text is `text`), as a span with `best`'s score; None when the question asks for no
    default, `best` is a heading's or no default is stated there, or `best` already stands in
    that value."""
    if not asks_default(question) or best.kind != "span" or best.heading:
        return None
    stated = statements(text)  # where each statement begins: its paragraph is the entry's
    if any(
        lo <= best.start < hi and best.text.strip(".,;: ") in text[lo:hi] for _, lo, hi in stated
    ):
        return None  # the reader's span is (part of) a stated value already: its extent stands
    paragraph_end = text.find("\n\n", best.start)
    paragraph_end = len(text) if paragraph_end < 0 else paragraph_end
    after = [v for v in stated if best.start <= v[0] < paragraph_end]
    before = [v for v in stated if best.start - BEFORE <= v[0] < best.start]
    chosen = after[0] if after else before[-1] if before else None
    if chosen is None:
        return None
    said, lo, hi = chosen
    start, end = sentence_around(text, said, hi)
    return replace(
        best, start=lo, end=hi, text=text[lo:hi], sentence=text[start:end], sentence_start=start
    )


def named_default(question: str, passages: list[Passage], scores: dict[str, float]) -> Span | None:
    """The default of the entry the question names as code, among `passages` (in the order
    the reader ranks them), scored as the reader's best span in its passage (`scores`, by
    passage id; 0 without one); None when the question asks for no default, names no entry
    as code, or no passage states one for it."""
    if not asks_default(question):
        return None
    versions = releases(question)  # "back in version 1.00": another release's default
    for name in {t for _, t in code_tokens(question)}:
        mention = re.compile(rf"(?<![\w\\-]){re.escape(name)}(?![\w-])", re.I)
        headed = [p for p in passages if mention.search(heading_path(p).split(" > ")[-1])]
        said = [(p, m.start()) for p in passages if (m := mention.search(p.text))]
        places = [(p, 0) for p in headed] + said
        found = next((f for p, at in places if (f := _stated_after(p, at, name))), None)
        found = found or next((f for p, _ in said if (f := _set_to(p, mention))), None)
        if found is not None:
            passage, lo, hi = found
            text = passage.text
            start, end = sentence_around(text, lo, hi)
            if any(v not in text[start:end] for v in versions):
                return None  # the default stated is not said to be that release's
            score = scores.get(passage.id, 0.0)
            return Span(passage.id, lo, hi, text[lo:hi], text[start:end], start, score)
    return None


def _stated_after(passage: Passage, at: int, name: str) -> tuple[Passage, int, int] | None:
    """The first default stated in `passage` from `at` (the entry's name) on, within AFTER
    characters and before the next entry's name (a paragraph that is one code token alone)."""
    text = passage.text
    end = min(len(text), at + AFTER)
    for entry in _ENTRY.finditer(text[at + len(name) : end]):
        if code_tokens(entry.group(1)):
            end = at + len(name) + entry.start()
            break
    for lo, hi in stated_defaults(text):
        if at <= lo < end and name.lower() not in text[lo:hi].lower():
            return passage, lo, hi
    return None


def _set_to(passage: Passage, mention: re.Pattern[str]) -> tuple[Passage, int, int] | None:
    """The value the entry is set to in code (`\\heavyrulewidth=.08em`): to the line's end."""
    for m in mention.finditer(passage.text):
        value = _SET.match(passage.text, m.end())
        if value is not None:
            return passage, value.start(1), value.end(1)
    return None
