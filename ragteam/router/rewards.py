"""Rewards that trade answer quality against cost."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, get_args

from ragteam.errors import InputError


def checked_choice(what: str, value: str, choices: tuple[str, ...]) -> str:
    """`value` if it is one of `choices`, else an error listing them (never a silent default)."""
    if value not in choices:
        raise InputError(f"unknown {what} '{value}'; choose one of {', '.join(choices)}")
    return value


RewardKind = Literal["f1", "paper", "authors"]
CostKind = Literal["log_ms", "seconds", "tokens", "calls"]


def log_ms(seconds: float) -> float:
    """ln of milliseconds, the unit of the authors' cost (and of the paper's Table 2)."""
    return math.log(max(seconds * 1000.0, 1.0))


def authors_penalty(s: float) -> float:
    """The authors' code: p = 0 for S <= 1, 1e-4 for 1 < S <= 10, 0.02 for S > 10."""
    return 0.0 if s <= 1 else 1e-4 if s <= 10 else 0.02


def paper_cost(s: float) -> float:
    """The paper's collaborative-setting cost T = S * (I[1 < S <= 10] / 10000 + I[S > 10] / 50)."""
    return s * ((1 < s <= 10) / 10000 + (s > 10) / 50)


@dataclass(frozen=True)
class Reward:
    """`f1`: quality alone (time-agnostic); `paper`: beta * F1 - (1 - beta) * T(cost);
    `authors`: F1 - p(S) * S with S the summed cost of the action's agents."""

    kind: RewardKind = "authors"
    beta: float = 0.5
    cost: CostKind = "log_ms"

    def __post_init__(self) -> None:
        checked_choice("reward", self.kind, get_args(RewardKind))
        checked_choice("cost", self.cost, get_args(CostKind))
        if not 0.0 <= self.beta <= 1.0:
            raise InputError(f"beta must lie in [0, 1], not {self.beta}")

    def __call__(self, f1: float, cost: float) -> float:
        if self.kind == "f1":
            return f1
        if self.kind == "paper":
            return self.beta * f1 - (1 - self.beta) * paper_cost(cost)
        return f1 - authors_penalty(cost) * cost
