"""Fitting the passage prior (`ragteam.reader.prior`) on readings of held questions: a
conditional logit over each question's spans read, the chance that a span is the one
answered with proportional to

    exp(score_power * log(probability) - rank_cost * position of its passage),

fitted by maximum likelihood of the right spans (a gold answer's words whole in them) among
all, over the questions some span of which is right. Two numbers, a convex objective: Newton's
method with a backtracking line search, in numpy."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragteam.errors import InputError
from ragteam.reader.prior import FLOOR, PassagePrior
from ragteam.reader.training.data import fold_of

RIDGE = 1e-3  # added to the Hessian's diagonal, so a flat objective still steps
STEPS = 50


@dataclass(frozen=True)
class Spans:
    """One question's spans as read: each one's probability, its passage's position in the
    order read, and whether it is a right answer; `group`: the file the question was asked of
    (questions of one file fall in one fold)."""

    group: str
    scores: tuple[float, ...]
    positions: tuple[int, ...]
    right: tuple[bool, ...]

    def columns(self) -> np.ndarray:
        """(spans, 2): log probability and minus the position, the prior's two inputs."""
        logs = np.log(np.maximum(np.asarray(self.scores, dtype=np.float64), FLOOR))
        return np.stack([logs, -np.asarray(self.positions, dtype=np.float64)], axis=1)


Objective = tuple[float, np.ndarray, np.ndarray]


def _objective(theta: np.ndarray, rows: list[tuple[np.ndarray, np.ndarray]]) -> Objective:
    """The negative log-likelihood at `theta`, its gradient and Hessian: over each question,
    log-sum-exp over all its spans less log-sum-exp over its right ones."""
    value, grad, hess = 0.0, np.zeros(2), np.zeros((2, 2))
    for x, right in rows:
        for part, sign in ((x, 1.0), (x[right], -1.0)):
            z = part @ theta
            w = np.exp(z - z.max())
            p = w / w.sum()
            mean = p @ part
            value += sign * (z.max() + np.log(w.sum()))
            grad += sign * mean
            hess += sign * ((part * p[:, None]).T @ part - np.outer(mean, mean))
    return value, grad, hess


def fit_prior(questions: Sequence[Spans]) -> PassagePrior:
    """The prior of greatest likelihood over `questions` (those with a right span and a wrong
    one: the others say nothing of the order)."""
    rows = [
        (q.columns(), np.asarray(q.right, dtype=bool))
        for q in questions
        if any(q.right) and not all(q.right)
    ]
    if not rows:
        raise InputError("no question has both a right and a wrong span read: nothing to fit on")
    theta = np.array([1.0, 0.0])
    value, grad, hess = _objective(theta, rows)
    for _ in range(STEPS):
        lift = max(0.0, -float(np.linalg.eigvalsh(hess).min())) + RIDGE  # a descent direction
        step = np.linalg.solve(hess + lift * np.eye(2), grad)
        size = 1.0
        while size > 1e-6:
            trial = _objective(theta - size * step, rows)
            if trial[0] <= value:
                break
            size /= 2
        if size <= 1e-6 or value - trial[0] < 1e-9:
            break
        theta, (value, grad, hess) = theta - size * step, trial
    if theta[0] <= 0:
        raise InputError(f"the fitted prior weighs the reader's probability by {theta[0]:.3f}")
    return PassagePrior(float(theta[0]), float(theta[1]))


def picked_right(prior: PassagePrior | None, questions: Sequence[Spans]) -> int:
    """How many of `questions` have a right span first by `prior` (None: by probability)."""
    found = 0
    for q in questions:
        if not q.scores:
            continue
        x = q.columns()
        weights = x[:, 0] if prior is None else x @ [prior.score_power, prior.rank_cost]
        found += bool(q.right[int(np.argmax(weights))])
    return found


def cross_validated(questions: Sequence[Spans], folds: int = 10) -> tuple[int, int]:
    """(right first by a prior fitted without each fold's files, right first by probability)
    over `questions`, folds by file."""
    with_prior = by_probability = 0
    for k in range(folds):
        held = [q for q in questions if fold_of(q.group, folds) == k]
        rest = [q for q in questions if fold_of(q.group, folds) != k]
        if held:
            with_prior += picked_right(fit_prior(rest), held)
            by_probability += picked_right(None, held)
    return with_prior, by_probability
