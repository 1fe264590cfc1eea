"""Plain-text helpers every floor may use: where the sentences of a text begin and end."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping

from ragteam.common.metrics import normalize_answer

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n+")


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) spans of the sentences of `text`, stripped, in order."""
    spans, start = [], 0
    for cut in [*(m for m in _SENTENCE.finditer(text)), None]:
        end = cut.start() if cut else len(text)
        piece = text[start:end]
        lead = len(piece) - len(piece.lstrip())
        if piece.strip():
            spans.append((start + lead, start + lead + len(piece.strip())))
        start = cut.end() if cut else len(text)
    return spans


def sentence_around(text: str, start: int, end: int) -> tuple[int, int]:
    """The (start, end) of the sentence of `text` that holds the span [start, end) (the
    sentences it crosses, joined, when it crosses a boundary)."""
    inside = [(a, b) for a, b in sentences(text) if a < end and b > start]
    if not inside:
        return start, end
    return min(inside[0][0], start), max(inside[-1][1], end)


_STOP = """a an the and or but if of at by for with about against between into through during
    before after above below to from up down in out on off over under again further then once
    here there when where why how all any both each few more most other some such no nor not
    only own same so than too very can will just should now is are was were be been being have
    has had having do does did doing i me my we our you your he him his she her it its they
    them their what which who whom this that these those am answer also as"""
STOPWORDS = frozenset(_STOP.split())


def words(text: str) -> list[str]:
    """The content words of `text`, normalised (SQuAD's normalisation), stopwords left out."""
    return [w for w in normalize_answer(text).split() if w not in STOPWORDS]


def visible(text: str) -> str:
    """`text` with its control characters (an escape sequence or a newline in a file name)
    written as visible escapes (`\\x1b`, `\\n`): safe to print on a terminal."""
    return "".join(
        c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii")
        for c in text
    )


_SUFFIX = re.compile(r"(?:ing|ed|s)$")


def bare(text: str) -> str:
    """`text` without its possessives ("mutt's pager" -> "mutt pager")."""
    return re.sub(r"['’]s\b", "", text)


def stems(text: str) -> set[str]:
    """The content words of `text`, lowercased, without a possessive, plural or verb ending
    ("deletes", "deleted" and "delete" are one); a single capital letter after the first word
    (a key such as `T`, a flag such as `K`) is a word, whatever the stopwords say."""
    words = re.findall(r"\w+", bare(text))
    kept = [
        w.lower()
        for n, w in enumerate(words)
        if w.lower() not in STOPWORDS or (n > 0 and len(w) == 1 and w.isupper() and w not in "AI")
    ]
    return {_stem(w) for w in kept}


def _stem(word: str) -> str:
    if len(word) <= 3:
        return word
    word = _SUFFIX.sub("", word)
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def rarity(held: list[set[str]], everywhere: bool = True) -> dict[str, float]:
    """Each word of the sets in `held` weighed log(1 + N / n), n of the N sets holding it: a
    word few hold says more (a word every set holds left out unless `everywhere`)."""
    counts = Counter(w for words in held for w in words)
    n_sets = len(held)
    return {w: math.log(1 + n_sets / n) for w, n in counts.items() if everywhere or n < n_sets}


def weighed(words: Iterable[str], weight: Mapping[str, float]) -> float:
    """The weights of `words` summed exactly (`math.fsum`: the same sum whatever order a set
    gives its words, so a tie between two sets of the same words is a tie)."""
    return math.fsum(weight.get(w, 0.0) for w in words)
