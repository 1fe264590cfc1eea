"""Whether a question asks where something stands (a chapter, a section, a release): learned
from the questions people wrote over real manuals, not from their wording by hand.

A logistic regression (`ragteam.common.linear`) over the question's words, word pairs and first
word, fitted by `ragteam.reader.training.asks` on docqa-train's training files (each question's
kind says whether its answer is a heading), shipped as `ragteam/data/heading-questions.json`
with its threshold and its cross-validated numbers. People ask for a heading in many ways
("where in the guidebook is ... explained?", "which part of the manual covers ...?"); the
former rule knew only "which chapter/section" and missed most. Which heading is asked for (the
chapter, the innermost section) is said by the question's words (`level`); a question naming a
release is the document's to answer (`asks_heading`)."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ragteam.common.linear import Linear, sigmoid
from ragteam.errors import InputError
from ragteam.reader.headings import named_heading

_WORD = re.compile(r"[a-z]+")
_RELEASE = re.compile(r"\b(?:versions?|releases?)\b", re.I)
_CHAPTER = re.compile(r"\b(?:chapter|appendix)\b", re.I)


def tokens(question: str) -> set[str]:
    """The question's features: its lower-case words, each pair of neighbouring words
    ("where_in") and its first word ("^which")."""
    words = _WORD.findall(question.lower())
    pairs = {f"{a}_{b}" for a, b in zip(words, words[1:], strict=False)}
    return set(words) | pairs | ({"^" + words[0]} if words else set())


def level(question: str) -> str:
    """The heading asked for: as the question names it (`named_heading`: "which release", "in
    which section"), else by a word it holds ("version", "chapter"), else "section" (the
    innermost)."""
    named = named_heading(question)
    if named is not None:
        return named
    if _RELEASE.search(question):
        return "version"
    return "chapter" if _CHAPTER.search(question) else "section"


def features(at: dict[str, int], questions: list[str]) -> np.ndarray:
    """A row a question: 1 in the column `at` gives each of its tokens, 0 elsewhere."""
    x = np.zeros((len(questions), len(at)), dtype="float32")
    for row, question in enumerate(questions):
        for t in tokens(question):
            if t in at:
                x[row, at[t]] = 1.0
    return x


@dataclass(frozen=True)
class HeadingQuestions:
    """P(the answer is a heading | the question's tokens); at `threshold` or above, it is."""

    vocab: tuple[str, ...]
    model: Linear
    threshold: float
    fitted: dict[str, Any] = field(default_factory=dict)  # what it was fitted on, its CV

    def __post_init__(self) -> None:  # each token's column, made once
        object.__setattr__(self, "_at", {t: i for i, t in enumerate(self.vocab)})

    def features(self, questions: list[str]) -> np.ndarray:
        return features(self._at, questions)  # type: ignore[attr-defined]

    def probability(self, question: str) -> float:
        return float(sigmoid(self.model(self.features([question])))[0])

    def to_json(self) -> dict[str, Any]:
        return {
            "vocab": list(self.vocab),
            "model": asdict(self.model),
            "threshold": self.threshold,
            "fitted": self.fitted,
        }

    @classmethod
    def read(cls, path: Path) -> HeadingQuestions:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            model = Linear(**data["model"])
            if len(model.weights) != len(data["vocab"]):
                raise ValueError("its weights do not match its words")
            return cls(tuple(data["vocab"]), model, float(data["threshold"]), data["fitted"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError(
                f"the heading-question model {path} is missing or unreadable ({exc}): "
                "reinstall ragteam, or fit it again (python bench/heading_fit.py)"
            ) from exc


@cache
def shipped() -> HeadingQuestions:
    from importlib.resources import files

    return HeadingQuestions.read(Path(str(files("ragteam.data") / "heading-questions.json")))


def asks_heading(question: str, model: HeadingQuestions | None = None) -> str | None:
    """ "version", "chapter" or "section" when the question asks which heading its answer
    stands under; else None. A question that names a release ("which version added X?") is
    asked of the headings whatever the model says: whether a release heading holds its answer
    is the document's to say (a changelog's entries stand under their versions, a manual's
    "since version 1.20" stands in its text: `headings.heading_span` answers only from a
    release heading). Any other is a heading question when `model` (the shipped one unless
    given) says so."""
    if named_heading(question) == "version":
        return "version"
    found = model or shipped()
    return level(question) if found.probability(question) >= found.threshold else None
