"""The lexical layer of the support check, always on: how much of what an answer sentence adds
to its question is found, word for word, in a passage. Cheap, explainable, and blind to
paraphrase and to negation — the trained checker reads the pair instead when it is there."""

from __future__ import annotations

import re

from ragteam.metrics import normalize_answer

# Chosen on the validation split of the checker's training pairs (bench/support_checker.py
# prints it): the share of new content words that must be found for a pair to count.
LEXICAL_THRESHOLD = 0.67

_STOP = """a an the and or but if of at by for with about against between into through during
    before after above below to from up down in out on off over under again further then once
    here there when where why how all any both each few more most other some such no nor not
    only own same so than too very can will just should now is are was were be been being have
    has had having do does did doing i me my we our you your he him his she her it its they
    them their what which who whom this that these those am answer also as"""
STOPWORDS = frozenset(_STOP.split())
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n+")


def words(text: str) -> list[str]:
    return [w for w in normalize_answer(text).split() if w not in STOPWORDS]


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


def lexical_score(question: str, sentence: str, passage: str) -> float:
    """Share of the sentence's content words — those the question does not already say, or all
    of them when it says them all — that the passage holds (0 when the sentence has none)."""
    said = words(sentence)
    asked = set(words(question))
    new = [w for w in said if w not in asked] or said
    if not new:
        return 0.0
    held = set(words(passage))
    return sum(1 for w in new if w in held) / len(new)
