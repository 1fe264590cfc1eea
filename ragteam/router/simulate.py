"""Train and evaluate a LinUCB router offline, on logged per-agent outcomes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, get_args

import numpy as np

from ragteam.errors import InputError
from ragteam.router.actions import Action, actions
from ragteam.router.linucb import LinUCB
from ragteam.router.rewards import Reward, checked_choice
from ragteam.router.table import ActionResult, Question, play
from ragteam.router.vote import TieBreak


class Features(Protocol):
    """A context feature set: maps a question to a vector and describes itself for the state
    file (see `ragteam.router.features`)."""

    def __call__(self, q: Question) -> Sequence[float]: ...

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Setup:
    agents: tuple[str, ...] = ("nor", "oner", "ircot")
    reward: Reward = Reward()
    epochs: int = 50
    alpha: float = 2.0
    seed: int = 42
    tie_break: TieBreak = "lexicographic"
    normalize_votes: bool = False
    # the options each agent ran with when its outcomes were logged; the live router runs them so
    agent_options: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        checked_choice("tie-break", self.tie_break, get_args(TieBreak))
        if self.epochs < 1 or self.alpha < 0:
            raise InputError("epochs must be at least 1 and alpha at least 0")


@dataclass
class Router:
    setup: Setup
    actions: list[Action]
    model: LinUCB
    features: Features

    def choose(self, q: Question) -> int:
        """Exploit: the action with the highest estimated reward (alpha plays no part)."""
        x = np.asarray(self.features(q), dtype=float)
        theta = np.einsum("aij,aj->ai", np.linalg.inv(self.model.A), self.model.b)
        values = theta @ x
        return int(np.flatnonzero(np.isclose(values, values.max(), rtol=0, atol=1e-12))[0])


@dataclass
class Evaluation:
    n: int
    f1: float
    cost: float
    by_label: dict[str, tuple[int, float, float]] = field(default_factory=dict)  # n, f1, cost
    choices: dict[str, dict[str, int]] = field(default_factory=dict)  # label -> action -> count


def outcomes(
    questions: Sequence[Question], acts: Sequence[Action], setup: Setup
) -> list[list[ActionResult]]:
    return [
        [play(q, a, setup.reward.cost, setup.tie_break, setup.normalize_votes) for a in acts]
        for q in questions
    ]


def train(questions: Sequence[Question], features: Features, setup: Setup = Setup()) -> Router:
    """`epochs` passes over the questions in a seeded random order; each step picks by upper
    confidence bound (random among exact ties) and learns from the reward of that action."""
    acts = actions(setup.agents)
    results = outcomes(questions, acts, setup)
    xs = [np.asarray(features(q), dtype=float) for q in questions]
    model = LinUCB(len(acts), len(xs[0]), setup.alpha)
    rng = np.random.default_rng(setup.seed)
    for _ in range(setup.epochs):
        for i in rng.permutation(len(questions)):
            a = model.select(xs[i], rng)
            r = results[i][a]
            model.update(a, xs[i], setup.reward(r.f1, r.cost))
    return Router(setup, acts, model, features)


def evaluate(
    router: Router, questions: Sequence[Question], pick: Callable[[Question], int] | None = None
) -> Evaluation:
    """Mean F1 and cost of the chosen actions, overall and per label."""
    choose = pick or router.choose
    acts = router.actions
    per_label: dict[str, list[ActionResult]] = {}
    choices: dict[str, dict[str, int]] = {}
    every = []
    for q in questions:
        a = choose(q)
        result = play(
            q,
            acts[a],
            router.setup.reward.cost,
            router.setup.tie_break,
            router.setup.normalize_votes,
        )
        label = q.label or "all"
        per_label.setdefault(label, []).append(result)
        name = "+".join(acts[a])
        choices.setdefault(label, {})[name] = choices.get(label, {}).get(name, 0) + 1
        every.append(result)
    by_label = {
        label: (len(rs), float(np.mean([r.f1 for r in rs])), float(np.mean([r.cost for r in rs])))
        for label, rs in sorted(per_label.items())
    }
    return Evaluation(
        len(every),
        float(np.mean([r.f1 for r in every])),
        float(np.mean([r.cost for r in every])),
        by_label,
        choices,
    )
