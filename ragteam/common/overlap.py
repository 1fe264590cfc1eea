"""Word overlap between an answer sentence, its question and a passage: what the lexical
support layer checks (`ragteam.support.lexical`), and what the reader's support reading and its
calibration weigh a reading by. Cheap, explainable, and blind to paraphrase and to negation."""

from __future__ import annotations

import re

from ragteam.common.text import words

# Two thirds of what a sentence adds must be found: fixed when the layer was written, not
# tuned on any dev set (docs/benchmarks.md sections 25 and 29 measure it).
LEXICAL_THRESHOLD = 0.67


def lexical_score(question: str, sentence: str, passage: str) -> float:
    """Share of what the sentence adds to the question (`new_words`) that the passage holds
    word for word; 0 when it adds nothing an answer could be checked by."""
    new = new_words(question, sentence)
    if not new:
        return 0.0
    held = set(words(passage))
    return sum(1 for w in new if w in held) / len(new)


def new_words(question: str, sentence: str) -> list[str]:
    """The content words the sentence adds to its question. A sentence that only repeats the
    question adds none, unless the question offers a choice ("X or Y?"), which an answer makes
    with words the question already says. A sentence whose only addition is a number adds
    none when the question asks for no number or date: a year copied from a passage is no
    answer to "who" or "which"."""
    said = words(sentence)
    asked = set(words(question))
    new = [w for w in said if w not in asked]
    if not new:
        return said if _CHOICE.search(question) else []
    if all(_NUMBER.match(w) for w in new) and not _ASKS_NUMBER.search(question):
        return []
    return new


_CHOICE = re.compile(r"\bor\b", re.IGNORECASE)
_NUMBER = re.compile(r"^\d[\d–]*(s|st|nd|rd|th)?$")  # after normalize_answer: no , . or -
_ASKS_NUMBER = re.compile(
    r"\b(how (many|much|long|old|far|tall|high|big|large|often)|when|years?|dates?|decade|"
    r"century|age|population|number|percent(age)?|capacity|seats?|scores?|rank(ed)?|height|"
    r"length)\b",
    re.IGNORECASE,
)
