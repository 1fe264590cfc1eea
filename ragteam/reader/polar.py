"""Yes/no questions: told by their grammar, answered by rules over the deciding sentence.

A question is a yes/no question when one of its clauses opens with an auxiliary verb ("Does
booktabs work with colortbl?", "When X is used alone, does it print Y?", "By default, can I
push ...?"), it holds no question word ("..., and what is it called?", "X, is a Y of which
kind?") and its polar clause offers no choice ("Is it A or B?"). Its answer is "yes" or
"no", with the sentence of the question's best span (the place the question is about) as the
evidence that decides it. What decides: a yes/no decider (`ragteam.reader.decider`, trained
on questions people asked) reading the question beside that sentence's context, where one
stands beside the reader's weights (none ships, §73); else what that sentence states when it
states it (`stated`: a setting's default given as yes/no/true/false/on/off, a negation, or the
question's words affirmed), else the reader's [CLS] outcome over that span's passage (trained
on Wikipedia's comparisons, it reads a manual's "Default: no" no better than chance:
docs/benchmarks.md §47, §60)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from ragteam.common.text import stems
from ragteam.reader.decider import context
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
_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|none|cannot|without)\b|n[’']t\b", re.I)
_DEFAULT = re.compile(r"\bdefault\b\W{0,3}(yes|no|true|false|on|off|enabled|disabled|none)\b", re.I)
_SAYS_YES = {"yes", "true", "on", "enabled"}
BEFORE = 300  # characters before the sentence where a reference entry's default may stand
AFFIRMED = 2 / 3  # the share of the question's content words a sentence must say to affirm it


def is_polar(question: str) -> bool:
    """Whether `question` asks for yes or no (see the module's doc)."""
    clauses = [c.strip() for c in re.split(r"[,;:]\s+", question.strip().lower()) if c.strip()]
    if _ASKS.search(question.lower()):
        return False
    return any(_OPENS_POLAR.match(c) and not _CHOICE.search(c) for c in clauses)


def stated(question: str, sentence: str, before: str = "") -> str | None:
    """ "yes" or "no" where `sentence` states it for `question`: the default it gives a setting
    when the question asks about a default ("Default: no", "(Default: false"; else the last
    such default in `before`, the text just before the sentence, where a reference entry heads
    with it: "ssl_verify_dates Type: boolean Default: yes"), else "no" when it negates
    ("neither feature is enabled", "This is not a bug"), else "yes" when it says at least
    AFFIRMED of the question's content words; None when the question negates itself ("Isn't
    X ...?") or the sentence says too little of it."""
    if _NEGATION.search(question):
        return None
    if "default" in question.lower():
        found = _DEFAULT.search(sentence) or next(reversed(list(_DEFAULT.finditer(before))), None)
        if found is not None:
            return "yes" if found.group(1).lower() in _SAYS_YES else "no"
    if _NEGATION.search(sentence):
        return "no"
    asked, said = stems(question), stems(sentence)
    return "yes" if asked and len(asked & said) >= AFFIRMED * len(asked) else None


def polar_answer(
    reading: Reading,
    question: str = "",
    text: str = "",
    decide: Callable[[str, str], float] | None = None,
) -> Span | None:
    """The yes or no over the passage of the reading's best span (`text` is that passage's),
    at that span's sentence: with `decide` (the yes/no decider's P(yes) for the question over
    the context around the sentence: `ragteam.reader.decider`), what it decides; else what the
    sentence states (`stated`; its BEFORE characters before read for a default), else the better
    of the reader's two outcomes there; None when neither says."""
    best = next((s for s in reading.spans if s.kind == "span"), None)
    outcomes = list(reading.outcomes) or [s for s in reading.spans if s.kind in ("yes", "no")]
    if best is None:
        return max(outcomes, key=lambda s: s.score, default=None)
    outcomes = [s for s in outcomes if s.passage_id == best.passage_id] or outcomes
    end = best.sentence_start + len(best.sentence)
    word = None
    if decide is not None and question and text:
        yes = decide(question, context(text, best.sentence_start, end))
        word = "yes" if yes >= 0.5 else "no"
    elif question and not best.heading:
        before = text[max(0, best.sentence_start - BEFORE) : best.sentence_start]
        word = stated(question, best.sentence, before)
    if word is None:
        return max(outcomes, key=lambda s: s.score, default=None)
    score = max((s.score for s in outcomes if s.kind == word), default=best.score)
    return replace(best, start=best.sentence_start, end=end, text=word, kind=word, score=score)
