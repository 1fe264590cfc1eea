"""Questions whose answer is a heading: which version or release (a changelog's entries stand
under their version), which chapter, which section. The reader finds the passage that holds
the fact; the answer is then where that passage stands: the version in its heading path, its
chapter, its innermost section. The passage that holds the fact is the one whose text (its
heading aside) says most of the question's words, the rarer ones in the block weighing more
(`by_content`): the reader, asked "which version", ranks the spans of versions in headings
first, whatever passage they head. Where a passage's text names a finer release of its
heading's version ("worked incorrectly prior to version 5.4.2" under "version 5.4"), that
release is the answer. A rule on the question's grammar and the heading's shape, no
threshold: the answer keeps the confidence of the words that found the passage, and says
that it came from the heading (`Span.heading`) when it did. A question that names a release
("what did httpx switch to in 0.23.0?") is read over the passages under that release's
heading or naming it in their text (`under_release`), when any was retrieved; whether an
answer was found at all is judged over every passage retrieved (`roles.answer_by_reading`)."""

from __future__ import annotations

import re
from dataclasses import replace

from ragteam.common.text import rarity, sentence_around, stems, weighed
from ragteam.reader.spans import Span
from ragteam.reader.view import heading_path
from ragteam.types import Passage

# the wh-word, then within three words the noun it asks for ("which gnuplot version", "what
# release", "in which section"), no verb between ("what epoch did gnuplot versions use" asks for
# an epoch); "the mini version of" or "did the film release" ask for none
_VERB = r"(?:do|does|did|is|are|was|were|has|have|had|can|could|will|would|should)\b"
_WH = r"\b(?:which|what)\s+(?:(?!" + _VERB + r")[\w.-]+\s+){0,3}?"
_ASKS = (
    ("version", re.compile(_WH + r"(?:version|release)s?\b", re.I)),
    (
        "version",
        re.compile(
            r"^\s*when (?:was|were|did)\b.*\b(?:added|introduced|removed|"
            r"deprecated|dropped|fixed)\b(?:\s+(?:to|in|from)\s+[\w.-]+)?\s*\??\s*$",
            re.I,
        ),
    ),  # fmt: skip
    ("chapter", re.compile(_WH + r"(?:chapter|appendix)\b", re.I)),
    ("section", re.compile(_WH + r"(?:sub)?(?:section|heading)\b", re.I)),
)
_VERSION = re.compile(r"(?<![\w.])v?\d+(?:\.\d+)+[a-z]?\d*(?!\w|\.\w)")
# verbs a question says nothing of its fact with ("which release made X run?")
LIGHT_VERBS = stems("made make makes making do does did done get gets got")
_CHAPTER = re.compile(r"^(?:chapter|appendix|part)\b|^\d+(?:\.\d+)*\.?\s", re.I)


def named_heading(question: str) -> str | None:
    """ "version", "chapter" or "section" when the question's words name which one it asks
    for ("which release", "in which section"); else None. Whether a question asks for a
    heading at all is learned (`ragteam.reader.asks`): this says only which."""
    return next((kind for kind, rule in _ASKS if rule.search(question)), None)


def by_content(question: str, passages: list[Passage]) -> list[Passage]:
    """`passages` ordered by how much of the question their text says (their order kept among
    equals): the sum, over the question's content words in the text, of log(1 + N / df), df
    the passages of the N that say the word; verbs that say nothing of the fact ("which
    release made X run") left out."""
    asked = stems(question) - LIGHT_VERBS
    said = [stems(p.text) & asked for p in passages]
    weight = rarity(said)
    score = [weighed(words, weight) for words in said]
    order = sorted(range(len(passages)), key=lambda i: -score[i])
    return [passages[i] for i in order]


def releases(text: str) -> set[str]:
    """The releases `text` names ("5.4.2", "v0.23.0" as "0.23.0")."""
    return {m.group().lstrip("v") for m in _VERSION.finditer(text)}


def under_release(question: str, passages: list[Passage]) -> list[Passage]:
    """The passages whose heading path or text names a release the question names ("what did
    httpx switch to in 0.23.0?": the entries under "0.23.0"; "who helped build release 3.0?":
    the history saying "a new regular release 3.0"), all of them when none does."""
    named = releases(question)
    if not named:
        return passages
    under = [
        p
        for p in passages
        if named & releases(p.text)
        or (p.locator is not None and p.locator.section and named & releases(heading_path(p)))
    ]
    return under or passages


def heading_span(kind: str, passage: Passage, found: Span) -> Span | None:
    """The heading of `passage` that answers a `kind` question, as a heading span with the
    score of `found` (the words that located the passage); None when its path has none (a
    version question over a passage under no versioned heading, a passage with no path)."""
    path = heading_path(passage)
    if not path or passage.locator is None or not passage.locator.section:
        return None
    parts, at = [], 0
    for part in path.split(" > "):
        parts.append((at, part))
        at += len(part) + 3
    if kind == "version":
        found_in = [(a + m.start(), m.group()) for a, p in parts for m in _VERSION.finditer(p)]
        if not found_in:
            return None
        start, text = found_in[-1]  # the innermost version
        if (finer := _finer(passage.text, text)) is not None:
            lo, hi = finer.span()
            at, to = sentence_around(passage.text, lo, hi)
            sentence = passage.text[at:to]
            return replace(
                found, start=lo, end=hi, text=finer.group(), sentence=sentence, sentence_start=at
            )
    elif kind == "chapter":
        start, text = next(((a, p) for a, p in parts if _CHAPTER.search(p)), parts[-1])
    else:
        start, text = parts[-1]
    return replace(
        found,
        start=start,
        end=start + len(text),
        text=text,
        sentence=path,
        sentence_start=0,
        kind="span",
        heading=True,
    )


def _finer(text: str, version: str) -> re.Match[str] | None:
    """The one finer release of `version` that `text` names ("5.4.2" of "5.4"), else None."""
    prefix = f"{version.lstrip('v')}."
    finer = [m for m in _VERSION.finditer(text) if m.group().lstrip("v").startswith(prefix)]
    return finer[0] if finer and len({m.group() for m in finer}) == 1 else None
