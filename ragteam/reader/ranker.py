"""The answer ranker: one fitted model that picks the answer among the candidates of a reading
(the reader's best different spans and what each rule proposes), in place of a fixed order of
rules and hand thresholds, and gives the probability that its pick is right, which the label
and `--abstain` use.

A candidate is a span with the sources that propose it (the same words from the reader and a
rule are one candidate, proposed by both). Its features (`FEATURES`) say what the reading
says of it (the reader's probability of its words, the no-answer probability, the margin over
the next answer, how many passages give it, its passage's place in the retrieval order, its
rank among the reader's spans), who proposes it, what the question asks for (a number, a
version, a name, a list, a code token, a default, a heading), where the span stands (a
heading, a table row, a code token) and its shape (length, whole words, the question's own
words repeated). Two logistic regressions (`ragteam.common.linear`): `spans`, that a candidate is a
right answer, for every question but yes/no ones; `polar`, that the answer to a yes/no
question is "yes", from the reader's two outcomes and what the deciding sentence states.

Fitted by `ragteam.reader.training.ranker` on readings of questions people wrote over documents
the reader was not trained on (docqa-train's held training files), never on a benchmark."""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragteam.common.linear import Linear, sigmoid
from ragteam.common.metrics import normalize_answer
from ragteam.errors import InputError
from ragteam.reader.spans import Reading, Span

SOURCES = ("reader", "heading", "keyed", "column", "default", "said_default", "code", "list")
ASKS = {
    "number": re.compile(
        r"\b(how (many|much|long|large|big|wide|high|often)|what (number|size|"
        r"port|value|percentage|limit)|how many)\b",
        re.I,
    ),
    "version": re.compile(r"\b(version|release)\b", re.I),
    "who": re.compile(r"\b(who|whom|whose)\b", re.I),
    "when": re.compile(r"\b(when|what year|which year|what date)\b", re.I),
    "list": re.compile(r"\b(which|what) (two|three|four|five|\w+s)\b|\blist\b|\bwhat are\b", re.I),
    "default": re.compile(r"\bdefault", re.I),
    "which": re.compile(r"\b(which|what)\b", re.I),
}
_CODE = re.compile(r"[-_/\\=<>{}%$.]\w|^-|\w\(")
_WORD = re.compile(r"\w+")
RANKED = 8  # the reader's best different spans that are candidates
FEATURES = (
    "answer_probability",
    "no_answer",
    "margin",
    "passages_agreeing",
    "passage_rank",
    "reader_rank",
    *(f"from_{s}" for s in SOURCES),
    *(f"asks_{a}" for a in ASKS),
    "asks_heading",
    "asks_code",
    "heading",
    "table_row",
    "code_like",
    "has_digit",
    "only_digits",
    "words",
    "whole_words",
    "echo_share",
    "heading_fit",
    "code_fit",
    "default_fit",
    "list_fit",
    "number_fit",
)
POLAR_FEATURES = ("outcome_margin", "stated", "no_answer", "question_negated", "sentence_negated")


@dataclass(frozen=True)
class Candidate:
    """A span proposed as the answer, with every source that proposes it."""

    span: Span
    sources: frozenset[str]


def _log_odds(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def _asked(question: str) -> dict[str, float]:
    from ragteam.reader.asks import asks_heading
    from ragteam.reader.tokens import asks_code

    said = {a: float(bool(rule.search(question))) for a, rule in ASKS.items()}
    said["heading"] = float(asks_heading(question) is not None)
    said["code"] = float(asks_code(question))
    return said


def _line_of(text: str, start: int, end: int) -> str:
    lo = text.rfind("\n", 0, start) + 1
    hi = text.find("\n", end)
    return text[lo : hi if hi >= 0 else len(text)]


def _standing(reading: Reading, span: Span) -> tuple[float, float, int, int]:
    """How the reading stands by `span`'s words: their probability over every passage, its
    margin over the next different answer's, the passages saying them, and the rank of the
    first span saying them among the different answers (RANKED when none does)."""
    said = normalize_answer(span.text)
    probability, others, agreeing, rank = 0.0, {}, set(), RANKED
    seen: list[str] = []
    for s in reading.spans:
        words = normalize_answer(s.text)
        if words not in seen:
            seen.append(words)
        if words == said:
            probability += s.score
            agreeing.add(s.passage_id)
            rank = min(rank, seen.index(words))
        else:
            others[words] = others.get(words, 0.0) + s.score
    probability = min(1.0, probability)
    return probability, probability - max(others.values(), default=0.0), len(agreeing), rank


def features(
    question: str,
    reading: Reading,
    candidate: Candidate,
    texts: dict[str, str],
    order: dict[str, int],
) -> list[float]:
    """FEATURES of `candidate` in `reading`; `texts` maps passage ids to their texts, `order`
    to their place in the order read."""
    span = candidate.span
    probability, margin, agreeing, rank = _standing(reading, span)
    asks = _asked(question)
    text = texts.get(span.passage_id, "")
    line = "" if span.heading else _line_of(text, span.start, span.end)
    words = _WORD.findall(span.text)
    asked = {w.lower() for w in _WORD.findall(question)}
    echo = sum(w.lower() in asked for w in words) / len(words) if words else 1.0
    whole = (span.heading or span.start == 0 or not text[span.start - 1].isalnum()) and (
        span.heading or span.end >= len(text) or not text[span.end].isalnum()
    )
    code = bool(_CODE.search(span.text))
    digit = any(c.isdigit() for c in span.text)
    src = candidate.sources
    return [
        _log_odds(probability),
        _log_odds(reading.no_answer),
        margin,
        float(agreeing),
        float(order.get(span.passage_id, len(order))),
        float(rank),
        *(float(s in src) for s in SOURCES),
        *(asks[a] for a in ASKS),
        asks["heading"],
        asks["code"],
        float(span.heading),
        float(" | " in line),
        float(code),
        float(digit),
        float(bool(re.fullmatch(r"[\d.,:%\s-]+", span.text.strip()))),
        math.log1p(len(words)),
        float(whole),
        echo,
        asks["heading"] * float("heading" in src or span.heading),
        asks["code"] * float(code),
        asks["default"] * float("default" in src or "said_default" in src),
        asks["list"] * float("list" in src),
        asks["number"] * float(digit),
    ]


def polar_features(question: str, reading: Reading, text: str) -> list[float]:
    """POLAR_FEATURES of a yes/no question's reading: the log-odds of the reader's "yes" over
    its "no" (at the passage of its best span), what the best span's sentence states
    (`polar.stated`: +1 yes, -1 no, 0 neither; `text` is that span's passage), the no-answer
    log-odds, and negations in the question and the sentence."""
    from ragteam.reader.polar import _NEGATION, BEFORE, stated

    best = next((s for s in reading.spans if s.kind == "span"), None)
    outcomes = list(reading.outcomes) or [s for s in reading.spans if s.kind in ("yes", "no")]
    said = None
    if best is not None:
        outcomes = [s for s in outcomes if s.passage_id == best.passage_id] or outcomes
        before = text[max(0, best.sentence_start - BEFORE) : best.sentence_start]
        said = None if best.heading else stated(question, best.sentence, before)
    yes = max((s.score for s in outcomes if s.kind == "yes"), default=0.0)
    no = max((s.score for s in outcomes if s.kind == "no"), default=0.0)
    sentence = best.sentence if best is not None else ""
    return [
        _log_odds(yes + 1e-6) - _log_odds(no + 1e-6),
        {"yes": 1.0, "no": -1.0}.get(said or "", 0.0),
        _log_odds(reading.no_answer),
        float(bool(_NEGATION.search(question))),
        float(bool(_NEGATION.search(sentence))),
    ]


@dataclass(frozen=True)
class Ranker:
    """The fitted models (`spans`, `polar`), the probability at or above which a pick is
    labelled supported (`threshold` for a span, `polar_threshold` for a yes or no: each fitted
    for the precision the label promises) and how they were fitted (`fitted`)."""

    spans: Linear
    polar: Linear
    threshold: float
    polar_threshold: float
    fitted: dict[str, Any]

    def right(self, rows: list[list[float]]) -> np.ndarray:
        """The probability that each candidate (its features) is a right answer."""
        if not rows:
            return np.zeros(0)
        return sigmoid(self.spans(np.asarray(rows, dtype="float32")))

    def yes(self, row: list[float]) -> float:
        """The probability that a yes/no question's answer is "yes"."""
        return float(sigmoid(self.polar(np.asarray([row], dtype="float32")))[0])

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(FEATURES),
            "polar_features": list(POLAR_FEATURES),
            "spans": asdict(self.spans),
            "polar": asdict(self.polar),
            "threshold": self.threshold,
            "polar_threshold": self.polar_threshold,
            "fitted": self.fitted,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Ranker:
        if list(data.get("features", ())) != list(FEATURES) or list(
            data.get("polar_features", ())
        ) != list(POLAR_FEATURES):
            raise InputError(
                "the answer ranker was fitted on other features than this ragteam computes: "
                "fit it again (python bench/ranker_fit.py) or reinstall ragteam"
            )
        return cls(
            Linear(**data["spans"]),
            Linear(**data["polar"]),
            float(data["threshold"]),
            float(data["polar_threshold"]),
            data.get("fitted", {}),
        )

    @classmethod
    def read(cls, path: Path) -> Ranker:
        try:
            return cls.from_json(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError(
                f"the answer ranker {path} is missing or unreadable ({exc}): reinstall ragteam "
                "or fit it again (python bench/ranker_fit.py)"
            ) from exc


def ranker_path(weights: Path) -> Path:
    """The ranker fitted with the reader `weights` (its sidecar `NAME.ranker.json`)."""
    return weights.with_name(weights.name.removesuffix(".safetensors") + ".ranker.json")
