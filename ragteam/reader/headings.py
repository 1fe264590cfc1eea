"""Questions whose answer is a heading: which version or release (a changelog's entries stand
under their version), which chapter, which section. The reader finds the passage that holds
the fact; the answer is then where that passage stands: the version in its heading path, its
chapter, its innermost section. A rule on the question's grammar and the heading's shape, no
threshold: the answer keeps the confidence of the words that found the passage, and says
that it came from the heading (`Span.heading`)."""

from __future__ import annotations

import re
from dataclasses import replace

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
            r"deprecated|dropped|fixed)\s*\??\s*$",
            re.I,
        ),
    ),  # fmt: skip
    ("chapter", re.compile(_WH + r"(?:chapter|appendix)\b", re.I)),
    ("section", re.compile(_WH + r"(?:sub)?(?:section|heading)\b", re.I)),
)
_VERSION = re.compile(r"(?<![\w.])v?\d+(?:\.\d+)+[a-z]?\d*(?![\w.])")
_CHAPTER = re.compile(r"^(?:chapter|appendix|part)\b|^\d+(?:\.\d+)*\.?\s", re.I)


def asks_heading(question: str) -> str | None:
    """ "version", "chapter" or "section" when the question asks which one; else None."""
    return next((kind for kind, rule in _ASKS if rule.search(question)), None)


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
