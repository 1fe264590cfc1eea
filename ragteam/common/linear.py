"""A linear model over standardised features, as fitted models ship it (JSON-able lists), and
its fit: L2-penalised logistic regression by Newton's method. Used by the verdicts and by the
reader's confidence; numpy only."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Linear:
    """Standardised features times `weights`, plus `bias`."""

    weights: list[float]
    bias: float
    mean: list[float]
    scale: list[float]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        z = (x - np.asarray(self.mean, dtype="float32")) / np.asarray(self.scale, dtype="float32")
        return z @ np.asarray(self.weights, dtype="float32") + self.bias


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-np.clip(x, -40, 40)))


def standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each column's mean and scale (1 where a column is constant)."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    return mean, np.where(scale > 1e-6, scale, 1.0)


def logistic(z: np.ndarray, y: np.ndarray, l2: float, steps: int = 25) -> np.ndarray:
    """L2-penalised logistic regression by Newton's method; the intercept is last, unpenalised."""
    x = np.hstack([z, np.ones((len(z), 1))])
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(steps):
        p = sigmoid(x @ w)
        grad = x.T @ (p - y) + penalty * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty + 1e-9)
        w -= np.linalg.solve(hess, grad)
    return w


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float) -> Linear:
    """A logistic regression of `y` (0/1) on the columns of `x`, standardised."""
    x = x.astype("float64")
    mean, scale = standardise(x)
    w = logistic((x - mean) / scale, y.astype("float64"), l2)
    return Linear(w[:-1].tolist(), float(w[-1]), mean.tolist(), scale.tolist())
