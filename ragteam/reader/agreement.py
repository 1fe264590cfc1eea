"""How far the reader's reading of one passage gives what an answer sentence says: the
reading layer's score of a (sentence, passage) pair (`ragteam.support.reading`) and the
threshold the reader's calibration fits on it (`ragteam.reader.training.calibrate`)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ragteam.common.metrics import normalize_answer
from ragteam.common.overlap import LEXICAL_THRESHOLD, new_words
from ragteam.common.text import STOPWORDS
from ragteam.types import Passage

if TYPE_CHECKING:
    from ragteam.reader import Reader

TOP_SPANS = 8  # readings of a passage weighed by their probability


def content(text: str) -> list[str]:
    """The text's words, normalised, without stopwords."""
    return [w for w in normalize_answer(text).split() if w not in STOPWORDS]


def pair_score(
    model: Reader, question: str, sentence: str, passage: Passage, lexical: float
) -> float:
    """How far a reading of `passage` alone gives what `sentence` says: the expected token F1
    between the reader's spans (weighted by their probability) and the content words the
    sentence adds to its question, times the lexical share (relative to the lexical
    threshold) of those words in the passage. Unscaled: calibration fits a threshold on it."""
    said = new_words(question, sentence)
    if not said:
        return 0.0
    reading = model.read(question, [passage], top=TOP_SPANS)
    found = sum(s.score * agreement(s.text, said) for s in reading.spans)
    return found * min(1.0, lexical / LEXICAL_THRESHOLD)


def agreement(span: str, said: list[str]) -> float:
    """Token F1 between the span's words and `said` (a sentence's content words); a yes/no
    reading agrees with a sentence that says that word."""
    words = content(span) or normalize_answer(span).split()
    if not words or not said:
        return 0.0
    common = sum((Counter(words) & Counter(said)).values())
    if not common:
        return 0.0
    precision, recall = common / len(words), common / len(said)
    return 2 * precision * recall / (precision + recall)
