"""LinUCB (Li et al. 2010), disjoint linear models, one per action."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class LinUCB:
    """Per action a: A_a = I, b_a = 0; theta_a = A_a^-1 b_a;
    score_a(x) = theta_a . x + alpha * sqrt(x . A_a^-1 . x); update A_a += x x^T, b_a += r x."""

    def __init__(self, n_actions: int, dim: int, alpha: float = 2.0) -> None:
        self.alpha = alpha
        self.A = np.stack([np.eye(dim) for _ in range(n_actions)])
        self.b = np.zeros((n_actions, dim))

    @property
    def n_actions(self) -> int:
        return self.A.shape[0]

    def scores(self, x: Sequence[float]) -> np.ndarray:
        vec = np.asarray(x, dtype=float)
        inverse = np.linalg.inv(self.A)
        theta = np.einsum("aij,aj->ai", inverse, self.b)
        bonus = np.sqrt(np.einsum("i,aij,j->a", vec, inverse, vec))
        return theta @ vec + self.alpha * bonus

    def select(self, x: Sequence[float], rng: np.random.Generator | None = None) -> int:
        """The action with the highest upper bound; ties broken at random with `rng`, else by
        the lowest index."""
        scores = self.scores(x)
        best = np.flatnonzero(np.isclose(scores, scores.max(), rtol=0.0, atol=1e-12))
        return int(rng.choice(best)) if rng is not None and len(best) > 1 else int(best[0])

    def update(self, action: int, x: Sequence[float], reward: float) -> None:
        vec = np.asarray(x, dtype=float)
        actions, dims = self.A.shape[0], self.A.shape[1]
        if not 0 <= action < actions:
            raise ValueError(f"action {action} is not one of the router's {actions} actions")
        if vec.shape != (dims,):
            raise ValueError(f"a feature vector of {vec.shape} does not fit the router's {dims}")
        self.A[action] += np.outer(vec, vec)
        self.b[action] += reward * vec

    def to_dict(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "A": self.A.tolist(), "b": self.b.tolist()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LinUCB:
        A = np.asarray(data["A"], dtype=float)
        model = cls(A.shape[0], A.shape[1], float(data["alpha"]))
        model.A = A
        model.b = np.asarray(data["b"], dtype=float)
        return model
