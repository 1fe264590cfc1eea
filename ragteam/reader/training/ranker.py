"""Fitting the answer ranker (`ragteam.reader.ranker`) on readings of questions people wrote:
each question is searched and read as the `read` strategy does (bench/ranker_fit.py makes the
examples: `example_of`), every candidate its reading proposes is labelled right or wrong
against the gold answers (`is_right`), and two logistic regressions
are fitted (`spans` on the candidates of questions that are not yes/no, `polar` on the yes/no
ones). The label's threshold is the lowest probability at which the picks of the fitted
questions are right at least `precision` of the time (cross-fitted by file, so the threshold
is set on picks the model did not see)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragteam.common.linear import fit_logistic, sigmoid
from ragteam.common.metrics import match, normalize_answer
from ragteam.reader.ranker import FEATURES, POLAR_FEATURES, Ranker, features, polar_features
from ragteam.reader.spans import Reading
from ragteam.reader.stage import Rules, best_text, proposals
from ragteam.reader.training.data import fold_of
from ragteam.types import Passage

FOLDS = 5  # cross-fitting folds, by file
L2 = 1.0


@dataclass
class Example:
    """One question's readings as the ranker sees them: its candidates' features and whether
    each is right (a question that is not yes/no), or its polar features and whether the
    answer is yes."""

    qid: str
    group: str  # the file it was asked over (folds keep a file whole)
    polar: bool
    rows: list[list[float]] = field(default_factory=list)
    right: list[int] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return self.__dict__

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Example:
        return cls(**data)


def is_right(text: str, golds: list[str]) -> bool:
    """A candidate is right when a gold answer's words stand whole in it (the benchmarks'
    match) and it is not much longer than the longest gold answer (a sentence that holds the
    answer is not the answer)."""
    if not match(text, golds):
        return False
    longest = max(len(normalize_answer(g).split()) for g in golds)
    return len(normalize_answer(text).split()) <= 2 * longest + 3


def example_of(
    question: dict[str, Any],
    reading: Reading,
    passages: list[Passage],
    rules: Rules,
    earlier: Callable[[str], list[Passage]] | None,
    group: str,
) -> Example:
    """The Example of `question` (a docqa row) whose reading over `passages` is `reading`."""
    from ragteam.reader.polar import is_polar

    asked, golds = question["question"], question["answers"]
    if is_polar(asked):
        row = polar_features(asked, reading, best_text(reading, passages))
        yes = golds[0].lower() == "yes"
        return Example(question["id"], group, True, [row], [int(yes)], [golds[0].lower()])
    candidates = proposals(asked, reading, passages, rules, earlier)
    texts = {p.id: p.text for p in passages}
    order = {p.id: n for n, p in enumerate(passages)}
    return Example(
        question["id"],
        group,
        False,
        [features(asked, reading, c, texts, order) for c in candidates],
        [int(is_right(c.span.text, golds)) for c in candidates],
        [c.span.text for c in candidates],
    )


def _fit(examples: list[Example], polar: bool) -> Any:
    rows = [r for e in examples if e.polar == polar for r in e.rows]
    right = [y for e in examples if e.polar == polar for y in e.right]
    x = np.asarray(rows, dtype="float64").reshape(len(rows), -1)
    return fit_logistic(x, np.asarray(right, dtype="float64"), L2)


def picks(model: Any, examples: Iterable[Example]) -> list[tuple[float, int]]:
    """(probability, right) of the pick of each example that is not yes/no."""
    out = []
    for e in examples:
        if e.polar or not e.rows:
            continue
        p = sigmoid(model(np.asarray(e.rows, dtype="float32")))
        best = int(np.argmax(p))
        out.append((float(p[best]), e.right[best]))
    return out


def polar_picks(model: Any, examples: Iterable[Example]) -> list[tuple[float, int]]:
    """(probability of the word said, right) of each yes/no example."""
    out = []
    for e in examples:
        if e.polar and e.rows:
            yes = float(sigmoid(model(np.asarray(e.rows, dtype="float32")))[0])
            out.append((max(yes, 1 - yes), int((yes >= 0.5) == bool(e.right[0]))))
    return out


def threshold_for(picked: list[tuple[float, int]], precision: float) -> float:
    """The lowest probability above which the picks are right at least `precision` of the
    time (1.0 when no such probability leaves any pick)."""
    ranked = sorted(picked, reverse=True)
    best, right = 1.0, 0
    for n, (p, y) in enumerate(ranked, 1):
        right += y
        if right / n >= precision:
            best = p
    return best


def fit_ranker(
    examples: list[Example], precision: float = 0.85, report: Callable[[str], None] = print
) -> Ranker:
    """The ranker fitted on every example, with the label threshold set on cross-fitted picks."""
    held: list[tuple[float, int]] = []
    held_polar: list[tuple[float, int]] = []
    for k in range(FOLDS):
        train = [e for e in examples if fold_of(e.group, FOLDS) != k]
        test = [e for e in examples if fold_of(e.group, FOLDS) == k]
        if any(not e.polar for e in train) and test:
            held += picks(_fit(train, False), test)
        if any(e.polar for e in train) and test:
            held_polar += polar_picks(_fit(train, True), test)
    spans, polar = _fit(examples, False), _fit(examples, True)
    threshold = threshold_for(held, precision)
    polar_threshold = threshold_for(held_polar, precision)
    spans_n = [e for e in examples if not e.polar]
    right_any = sum(any(e.right) for e in spans_n)
    cross_right = sum(y for _, y in held)
    fitted = {
        "questions": len(examples),
        "polar": len(examples) - len(spans_n),
        "candidates": sum(len(e.rows) for e in spans_n),
        "with_a_right_candidate": right_any,
        "cross_fitted_picks_right": cross_right,
        "cross_fitted_picks": len(held),
        "cross_fitted_polar_right": sum(y for _, y in held_polar),
        "cross_fitted_polar": len(held_polar),
        "polar_threshold": polar_threshold,
        "precision": precision,
        "l2": L2,
    }
    report(f"ranker: {json.dumps(fitted)}; threshold {threshold:.3f}")
    assert len(spans.weights) == len(FEATURES) and len(polar.weights) == len(POLAR_FEATURES)
    return Ranker(spans, polar, threshold, polar_threshold, fitted)
