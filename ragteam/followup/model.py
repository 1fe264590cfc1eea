"""A follow-up question made to stand alone, learned from people's rewrites: the page's
conversation turns and a chat's messages go through `standalone`.

Two logistic regressions (`ragteam.common.linear`), fitted by `ragteam.followup.training.fit`
on follow-up chains people wrote with each turn's standalone rewrite (docqa-train's
conversations.jsonl, its training chains only), shipped as `ragteam/data/followup.json`:
- `leans`: whether the question leans on the conversation at all, from its own words (a
  pronoun, an opening "and"/"what about", a question word, its length, how many of its words
  the conversation said before); a fresh question that merely holds "it" or "there" stands
  alone;
- `carried`: for each word the earlier turns said (their questions and the latest answer),
  whether people's rewrite carries it, from where it was said (the question just before, the
  one before that, the chain's first, the latest answer), how often, and its shape (a name, a
  code token, a number).
The question then goes on with the carried words, in the order they were said:
"What is its default? (following: ServerAliveInterval ssh)". An earlier answer is carried only
word by word, where people carry it ("Is its output valid?" after "--dry-run"): never whole."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ragteam.common.linear import Linear, sigmoid
from ragteam.common.text import STOPWORDS
from ragteam.errors import InputError

WORD = re.compile(r"[A-Za-z0-9][\w+\-.=/~']*[\w+]|[A-Za-z0-9]")
PRONOUN = re.compile(
    r"\b(it|its|it's|they|them|their|these|those|this|that|he|she|him|her|his|there|one|ones)\b",
    re.I,
)
OPENS = re.compile(r"^\s*(and|but|also|so|then|what about|how about|or)\b", re.I)
ASKS = re.compile(r"^\s*(what|which|who|whom|whose|why|how|when|where|is|are|does|do|can)\b", re.I)
ANSWER_CHARS = 300  # of an earlier reply read for the words it may lend
LEAN_FEATURES = (
    "pronoun",
    "opens",
    "asks",
    "words",
    "content_words",
    "said_before",
    "named",
    "question_mark",
)
CARRY_FEATURES = (
    "in_last_question",
    "in_question_before",
    "in_first_question",
    "in_last_answer",
    "questions_saying",
    "position",
    "capitalized",
    "code",
    "digit",
    "length",
    "pronoun",
    "opens",
    "asked_words",
)


def words(text: str) -> list[str]:
    """`text`'s words as a rewrite would repeat them (code tokens whole, edge dots off)."""
    return [w.rstrip(".") for w in WORD.findall(text) if w.rstrip(".")]


def content(text: str) -> list[str]:
    return [w for w in words(text) if w.lower() not in STOPWORDS and len(w) > 1 or w.isdigit()]


def answer_only(reply: str) -> str:
    """A reply's answer: its first paragraph, without `[n]` markers, at most ANSWER_CHARS."""
    first = reply.strip().split("\n\n", 1)[0]
    return " ".join(re.sub(r"\[\d+\]", "", first).split())[:ANSWER_CHARS]


def lean_features(asked: str, questions: list[str], answers: list[str]) -> list[float]:
    """LEAN_FEATURES of `asked` after the earlier `questions` and `answers` (oldest first)."""
    said = {w.lower() for t in [*questions, *answers] for w in content(t)}
    own = content(asked)
    named = [w for w in words(asked)[1:] if w[:1].isupper() or re.search(r"[-_./=]|\d", w)]
    return [
        float(bool(PRONOUN.search(asked))),
        float(bool(OPENS.search(asked))),
        float(bool(ASKS.search(asked))),
        float(np.log1p(len(words(asked)))),
        float(len(own)),
        sum(w.lower() in said for w in own) / max(1, len(own)),
        float(len(named)),
        float(asked.strip().endswith("?")),
    ]


def candidates(
    asked: str, questions: list[str], answers: list[str], lean: list[float] | None = None
) -> list[tuple[str, list[float]]]:
    """Each word the earlier turns said that `asked` does not, once (first said first), with
    its CARRY_FEATURES (`lean`: `asked`'s LEAN_FEATURES, when already computed)."""
    own = {w.lower() for w in words(asked)}
    last_answer = answers[-1] if answers else ""
    sources = [*questions, last_answer]
    found: dict[str, tuple[str, list[float]]] = {}
    lean = lean if lean is not None else lean_features(asked, questions, answers)
    lows = [{w.lower() for w in content(q)} for q in questions]
    for text in sources:
        said = content(text)
        for at, word in enumerate(said):
            key = word.lower()
            if key in own or key in found:
                continue
            found[key] = (
                word,
                [
                    float(bool(questions) and key in lows[-1]),
                    float(len(questions) > 1 and key in lows[-2]),
                    float(bool(questions) and key in lows[0]),
                    float(key in {w.lower() for w in content(last_answer)}),
                    float(sum(key in low for low in lows)),
                    at / max(1, len(said) - 1),
                    float(word[:1].isupper() and at > 0),
                    float(bool(re.search(r"[-_./=+~]", word))),
                    float(any(c.isdigit() for c in word)),
                    float(np.log1p(len(word))),
                    lean[0],
                    lean[1],
                    lean[3],
                ],
            )
    return list(found.values())


@dataclass(frozen=True)
class FollowUps:
    """The fitted models and the probability at or above which a word is carried."""

    leans: Linear
    carried: Linear
    carry_at: float
    fitted: dict[str, Any]

    def rewrite(self, asked: str, questions: list[str], answers: list[str]) -> list[str]:
        """The words `asked` goes on with (none: it stands alone)."""
        if not questions:
            return []
        lean = lean_features(asked, questions, answers)
        if float(sigmoid(self.leans(np.asarray([lean], "float32")))[0]) < 0.5:
            return []
        found = candidates(asked, questions, answers, lean)
        if not found:
            return []
        p = sigmoid(self.carried(np.asarray([f for _, f in found], "float32")))
        return [w for (w, _), q in zip(found, p, strict=True) if q >= self.carry_at]

    def to_json(self) -> dict[str, Any]:
        return {
            "lean_features": list(LEAN_FEATURES),
            "carry_features": list(CARRY_FEATURES),
            "leans": asdict(self.leans),
            "carried": asdict(self.carried),
            "carry_at": self.carry_at,
            "fitted": self.fitted,
        }

    @classmethod
    def read(cls, path: Path) -> FollowUps:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data["lean_features"] != list(LEAN_FEATURES) or data["carry_features"] != list(
                CARRY_FEATURES
            ):
                raise ValueError("fitted on other features than this ragteam computes")
            return cls(
                Linear(**data["leans"]),
                Linear(**data["carried"]),
                float(data["carry_at"]),
                data.get("fitted", {}),
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError(
                f"the follow-up model {path} is missing or unreadable ({exc}): reinstall "
                "ragteam, or fit it again (python bench/follow_up_fit.py fit)"
            ) from exc


@cache
def shipped() -> FollowUps:
    from importlib.resources import files

    return FollowUps.read(Path(str(files("ragteam.data").joinpath("followup.json"))))


def standalone(
    asked: str, earlier: list[tuple[str, str]], limit: int, model: FollowUps | None = None
) -> tuple[str, str]:
    """(the question to answer, what it follows: "" when it stands alone). `earlier` holds the
    conversation's turns before it, oldest first, as (role, text) with role "user" or
    "assistant"; a question longer than `limit` with what it follows stands alone (a question
    that stands alone comes back as it was given)."""
    questions = [" ".join(t.split()) for r, t in earlier if r == "user" and t.strip()]
    answers = [answer_only(t) for r, t in earlier if r == "assistant" and t.strip()]
    carried = (model or shipped()).rewrite(asked, questions, answers)
    if not carried:
        return asked, ""
    follows = " ".join(carried)
    question = f"{' '.join(asked.split())} (following: {follows})"
    if len(question) > limit:
        return asked, ""
    return question, follows
