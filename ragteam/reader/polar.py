"""Yes/no questions: told by their grammar, answered by the reader's yes/no outcome.

A question is a yes/no question when one of its clauses opens with an auxiliary verb ("Does
booktabs work with colortbl?", "When X is used alone, does it print Y?", "By default, can I
push ...?"), it holds no question word ("..., and what is it called?", "X, is a Y of which
kind?") and its polar clause offers no choice ("Is it A or B?"). Its answer is "yes" or
"no": the reader's [CLS] outcome over the passage where it reads the question's best span
(the place the question is about), with the sentence of that span as the evidence that
decides it."""

from __future__ import annotations

import re

from ragteam.reader.spans import Reading, Span

_AUX = [
    "is",
    "are",
    "was",
    "were",
    "am",
    "do",
    "does",
    "did",
    "can",
    "could",
    "will",
    "would",
    "should",
    "shall",
    "may",
    "might",
    "must",
    "has",
    "have",
    "had",
    "isn't",
    "aren't",
    "wasn't",
    "weren't",
    "doesn't",
    "don't",
    "didn't",
    "can't",
    "cannot",
    "couldn't",
    "won't",
    "wouldn't",
    "shouldn't",
    "hasn't",
    "haven't",
]
_OPENS_POLAR = re.compile(r"^(?:" + "|".join(re.escape(a) for a in _AUX) + r")\b")
_ASKS = re.compile(r"\b(?:what|which|who|whom|whose|why|how)\b")
_CHOICE = re.compile(r"\bor\b")


def is_polar(question: str) -> bool:
    """Whether `question` asks for yes or no (see the module's doc)."""
    clauses = [c.strip() for c in re.split(r"[,;:]\s+", question.strip().lower()) if c.strip()]
    if _ASKS.search(question.lower()):
        return False
    return any(_OPENS_POLAR.match(c) and not _CHOICE.search(c) for c in clauses)


def polar_answer(reading: Reading) -> Span | None:
    """The reading's yes or no over the passage of its best span (the better of the two
    outcomes there), None when it read no yes/no outcome for that passage."""
    best = next((s for s in reading.spans if s.kind == "span"), None)
    outcomes = list(reading.outcomes) or [s for s in reading.spans if s.kind in ("yes", "no")]
    if best is not None:
        outcomes = [s for s in outcomes if s.passage_id == best.passage_id] or outcomes
    return max(outcomes, key=lambda s: s.score, default=None)
