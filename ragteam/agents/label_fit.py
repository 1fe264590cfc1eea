"""Fitting per-label biases on training rows (a role's label log-probabilities where its
reply starts): the biases that maximise accuracy, one per label but the first, by coordinate
ascent over a grid; a format's biases are kept only when a two-fold estimate (fit on one half,
score the other) beats the uncalibrated accuracy, so a gain that is noise is not shipped. A
fitted bias may put every answer on the majority label: the floor by construction.

A row is a dict with `format`, `labels`, `gold` and `logp` (label -> log-probability); the
roles' fitting (`ragteam train labels`) reads those off the model and calls `fit_formats`."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

GRID = [float(b) for b in np.round(np.arange(-6.0, 6.0001, 0.1), 2)]


def accuracy(rows: list[dict[str, Any]], bias: dict[str, float]) -> float:
    """How often the label with the highest biased log-probability is the gold one."""
    right = 0
    for row in rows:
        said = max(row["labels"], key=lambda lab: row["logp"][lab] + bias.get(lab, 0.0))
        right += said == row["gold"]
    return right / max(1, len(rows))


def fit(rows: list[dict[str, Any]], rounds: int = 4) -> dict[str, float]:
    """Biases maximising accuracy, coordinate by coordinate (the first label stays at 0; ties
    keep the smaller bias)."""
    labels = sorted({lab for r in rows for lab in r["labels"]})
    bias = dict.fromkeys(labels, 0.0)
    for _ in range(rounds):
        for label in labels[1:]:
            bias[label] = max(GRID, key=lambda b: (accuracy(rows, {**bias, label: b}), -abs(b)))
    return bias


def two_fold(rows: list[dict[str, Any]], seed: int) -> float:
    """Accuracy of biases fitted on one half of `rows` over the other, both ways."""
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    halves = [[rows[i] for i in order[::2]], [rows[i] for i in order[1::2]]]
    scores = [accuracy(halves[1 - n], fit(halves[n])) for n in (0, 1)]
    return sum(s * len(halves[1 - n]) for n, s in enumerate(scores)) / max(1, len(rows))


def fit_formats(
    rows: list[dict[str, Any]], formats: tuple[str, ...], seed: int
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, Any]]]:
    """Per format: the fitted biases, kept only where fitting on one half helps the other, and
    what was measured."""
    biases: dict[str, dict[str, float]] = {}
    report: dict[str, dict[str, Any]] = {}
    for fmt in formats:
        mine = [r for r in rows if r["format"] == fmt and r["gold"] in r["labels"]]
        if not mine:
            continue
        fitted = fit(mine)
        golds = [r["gold"] for r in mine]
        held = two_fold(mine, seed)
        kept = held > accuracy(mine, {})
        if kept:
            biases[fmt] = {label: b + 0.0 for label, b in fitted.items()}  # no -0.0
        report[fmt] = {
            "kept": kept,
            "rows": len(mine),
            "gold_labels": {lab: golds.count(lab) for lab in sorted(set(golds))},
            "accuracy_before": round(accuracy(mine, {}), 3),
            "accuracy_fitted": round(accuracy(mine, fitted), 3),
            "accuracy_two_fold": round(held, 3),
            "majority_label_share": round(max(map(golds.count, set(golds))) / len(golds), 3),
            "fitted": fitted,
        }
    return biases, report
