"""Names a question asks about that no passage mentions: a word the reader's vocabulary holds
only in pieces (a name, a code token: `AV1`, `WebP`, `jmap_session_url`, not an English word
a paraphrase may use) and that no passage of the index holds at all (by its BM25 vocabulary).
When a question names such a thing, the passages cannot answer it: the reader's best span is
only its best guess, and `--abstain` withholds it (docs/benchmarks.md §61: it stops 7 of the
11 unanswerable questions people wrote over the manuals set and 5 of docqa-dev's 11, and none
of their 86 and 90 answerable)."""

from __future__ import annotations

import re
from collections.abc import Callable

# the words BM25 reads (bm25s's own split: two or more word characters)
_WORD = re.compile(r"(?u)\b\w\w+\b")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*[a-z]?")  # 2048, 1.5, 64k: quantities, not names


def named(question: str, pieces: Callable[[str], int]) -> list[str]:
    """The words of `question` that name something: those the reader's vocabulary holds only
    as `pieces(word)` > 1 word pieces, numbers left out; each once, in the question's order,
    as written."""
    seen: set[str] = set()
    out: list[str] = []
    for word in _WORD.findall(question):
        low = word.lower()
        if low in seen or _NUMBER.fullmatch(low):
            continue
        seen.add(low)
        if pieces(low) > 1:
            out.append(word)
    return out


def unmentioned(
    question: str, pieces: Callable[[str], int], mentions: Callable[[str], bool | None]
) -> tuple[str, ...]:
    """The names of `question` (see `named`) that `mentions` says no passage holds: it is
    True when some passage holds the word, False when none does, None when it cannot tell
    (an index without a vocabulary: then nothing is said to be unmentioned)."""
    return tuple(w for w in named(question, pieces) if mentions(w) is False)
