"""A passage as the reader reads it: its heading path on a first line (for weights trained so),
then its text, or the part of a very long text that the question's words point at.

A passage's text is bounded by its index's token budget, but a corpus row kept whole
(`--passage-words 0`) or a text without whitespace can be megabytes, and the reader's cost grows
with its windows. At most READ_CHARS characters of a passage are read (about 9 windows): the
run of BLOCK-sized blocks that holds most of the question's words, the rest left unread and
said so (`Viewed.unread`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragteam.documents.text import heading_words
from ragteam.text import STOPWORDS
from ragteam.types import Passage

MAX_HEADING = 200  # characters of a heading path read before a passage (the innermost kept)
READ_CHARS = 6000  # characters of one passage read at most
BLOCK = 1000  # the unit in which a long passage's part to read is chosen


@dataclass(frozen=True)
class Viewed:
    """What the reader reads of `passage`: `text` is its heading line (ending at `cut`) and
    then passage.text[`lo`:`lo` + len(text) - cut]."""

    passage: Passage
    text: str
    cut: int
    lo: int = 0

    @classmethod
    def of(cls, passage: Passage, question: str = "", headings: bool = True) -> Viewed:
        path = heading_path(passage) if headings else ""
        head = f"{path}\n" if path else ""
        lo, hi = region(passage.text, question)
        return cls(passage, head + passage.text[lo:hi], len(head), lo)

    @property
    def unread(self) -> int:
        """Characters of the passage's text left unread."""
        return len(self.passage.text) - (len(self.text) - self.cut)


def heading_path(passage: Passage) -> str:
    """The passage's section path as one line (`Changelog > 0.25.1 > Added`; Sphinx's "¶"
    left out), or a corpus row's title (a Wikipedia paragraph's, as the reader was trained),
    at most MAX_HEADING characters of it (its innermost headings kept)."""
    if passage.locator is None or (passage.locator.record and not passage.locator.section):
        return heading_words(passage.title)[:MAX_HEADING]
    heads = [heading_words(h) for h in passage.locator.section]
    path = " > ".join(h for h in heads if h)
    return path[-MAX_HEADING:].lstrip(" >") if len(path) > MAX_HEADING else path


def region(text: str, question: str) -> tuple[int, int]:
    """[lo, hi) of `text` to read: all of it up to READ_CHARS, else the READ_CHARS-long run of
    blocks holding the most of the question's content words (the first such run on a tie)."""
    if len(text) <= READ_CHARS:
        return 0, len(text)
    words = {w for w in re.findall(r"\w+", question.lower()) if w not in STOPWORDS}
    blocks = range(0, len(text), BLOCK)
    hits = [
        sum(1 for w in set(re.findall(r"\w+", text[b : b + BLOCK].lower())) if w in words)
        for b in blocks
    ]
    span = READ_CHARS // BLOCK
    best = max(range(max(1, len(hits) - span + 1)), key=lambda n: sum(hits[n : n + span]))
    lo = best * BLOCK
    return lo, min(len(text), lo + READ_CHARS)
