"""A passage as the reader reads it: its heading path on a first line (for weights trained so),
then its text, or the part of a very long text that the question's words point at.

A passage's text is bounded by its index's token budget, but a corpus row kept whole
(`--passage-words 0`) or a text without whitespace can be megabytes, and the reader's cost grows
with its windows. At most READ_CHARS characters of a passage are read (about 9 windows): the
run of BLOCK-sized blocks that holds most of the question's words, the rest left unread and
said so (`Viewed.unread`).

A passage of lines (a table's rows, a PDF's two-column list, a definition list) may also be read
a second time as its key line alone (`Viewed.key`): the line that holds the question's words
found on the fewest of its lines (the row a question names by its key cell), after its table's
header row when it has one. The same words read in both views are one answer, their
probabilities summed: the row the question names weighs more than its neighbours."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragteam.common.text import STOPWORDS, rarity, weighed
from ragteam.documents.text import heading_words
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
    key: bool = False  # the key line's view: what stands before `cut` is context, not a heading

    @classmethod
    def of(cls, passage: Passage, question: str = "", headings: bool = True) -> Viewed:
        path = heading_path(passage) if headings else ""
        head = f"{path}\n" if path else ""
        lo, hi = region(passage.text, question)
        return cls(passage, head + passage.text[lo:hi], len(head), lo)

    @classmethod
    def key_line(cls, passage: Passage, question: str) -> Viewed | None:
        """The passage's key line read alone (after its table's header row), or None when no
        line stands out (`key_line`)."""
        found = key_line(passage.text, question)
        if found is None:
            return None
        header, lo, hi = found
        head = f"{header}\n" if header else ""
        return cls(passage, head + passage.text[lo:hi], len(head), lo, key=True)

    @property
    def unread(self) -> int:
        """Characters of the passage's text left unread (none for a key line's view: the
        passage is read whole beside it)."""
        return 0 if self.key else len(self.passage.text) - (len(self.text) - self.cut)


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


MIN_LINES = 3  # a passage of fewer lines has no key line
SHORT_LINE = 60  # a key line this short is a term: its definition, the next line, goes with it


def key_line(text: str, question: str) -> tuple[str, int, int] | None:
    """(table header row or "", lo, hi) of `text`'s line that the question's words single out:
    each content word the line shares with the question weighs log(1 + lines / lines holding
    it), a word on every line nothing; None when the best line does not beat every other, or
    the text has fewer than MIN_LINES lines. A first line of cells is a header row, never the
    key line; a table row (` | `) comes after it. A short line that is not a row brings the
    next line (a definition list's term and its definition). At most READ_CHARS are read."""
    lines, at = [], 0
    for line in text.split("\n"):
        if line.strip():
            lines.append((at, at + len(line)))
        at += len(line) + 1
    if len(lines) < MIN_LINES:
        return None
    asked = {w for w in re.findall(r"\w+", question.lower()) if w not in STOPWORDS}
    held = [asked & set(re.findall(r"\w+", text[a:b].lower())) for a, b in lines]
    weight = rarity(held, everywhere=False)  # a word on every line says nothing
    scores = [weighed(h, weight) for h in held]
    first = text[lines[0][0] : lines[0][1]][:MAX_HEADING]
    if " | " in first:
        scores[0] = 0.0  # a table's header row names columns, not a row
    order = sorted(range(len(lines)), key=lambda n: -scores[n])
    best = order[0]
    if scores[best] <= 0 or scores[best] == scores[order[1]]:
        return None
    lo, hi = lines[best]
    if best > 0 and " | " in first and " | " in text[lo:hi]:
        return first, lo, min(hi, lo + READ_CHARS)
    if hi - lo < SHORT_LINE and best + 1 < len(lines):
        hi = lines[best + 1][1]
    return "", lo, min(hi, lo + READ_CHARS)
