"""Per-question, per-agent outcomes: from the AQA authors' logs or from our own eval runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ragteam.common.metrics import f1_score
from ragteam.errors import InputError
from ragteam.eval.datasets import read_aqa_log
from ragteam.eval.row import EvalRow
from ragteam.eval.rundir import RunDir
from ragteam.router.actions import Action
from ragteam.router.rewards import CostKind, log_ms
from ragteam.router.vote import Ballot, TieBreak, majority_vote


@dataclass(frozen=True)
class AgentOutcome:
    prediction: str
    seconds: float
    tokens: float = 0.0
    calls: float = 0.0
    confidence: float = 0.0

    def cost(self, kind: CostKind) -> float:
        return {
            "log_ms": log_ms(self.seconds),
            "seconds": self.seconds,
            "tokens": self.tokens,
            "calls": self.calls,
        }[kind]


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answers: tuple[str, ...]
    label: str | None
    agents: dict[str, AgentOutcome] = field(default_factory=dict)

    def cost(self, agent: str, kind: CostKind) -> float:
        return self.agents[agent].cost(kind)


@dataclass(frozen=True)
class ActionResult:
    answer: str
    f1: float
    cost: float


def play(
    q: Question,
    action: Action,
    cost: CostKind = "log_ms",
    tie_break: TieBreak = "lexicographic",
    normalize: bool = False,
) -> ActionResult:
    """What an action would have answered on a logged question: the vote of its agents' logged
    answers, scored against the gold answers; its cost is the sum of its agents' costs."""
    ballots = [
        Ballot(a, q.agents[a].prediction, q.cost(a, cost), q.agents[a].confidence) for a in action
    ]
    winner = majority_vote(ballots, tie_break, normalize)
    return ActionResult(
        winner.answer, f1_score(winner.answer, q.answers), sum(b.cost for b in ballots)
    )


def from_aqa_log(path: str | Path) -> list[Question]:
    return [
        Question(
            r.id,
            r.question,
            r.answers,
            r.complexity,
            {n: AgentOutcome(a.prediction, a.seconds, calls=a.steps) for n, a in r.agents.items()},
        )
        for r in read_aqa_log(path)
    ]


def run_options(paths: Sequence[str | Path]) -> dict[str, dict]:
    """The options each strategy ran with in the given runs; two runs of one strategy with
    different options cannot both feed a router (their outcomes would overwrite each other)."""
    options: dict[str, dict] = {}
    where: dict[str, str] = {}
    for path in paths:
        for name, opts in RunDir(path).config().get("strategies", {}).items():
            if name in options and options[name] != opts:
                raise InputError(
                    f"'{name}' ran with options {options[name]} in {where[name]} and {opts} in "
                    f"{path}; train a router on runs with one set of options per strategy"
                )
            options[name], where[name] = opts, str(path)
    return options


def from_runs(
    paths: Sequence[str | Path], strategies: Sequence[str] | None = None
) -> list[Question]:
    """Questions answered by every chosen strategy in the given eval run directories."""
    run_options(paths)  # refuses conflicting options before anything is mixed
    rows: dict[str, dict[str, EvalRow]] = {}
    for path in paths:
        for row in RunDir(path).rows():
            rows.setdefault(row.id, {})[row.strategy] = row
    names = list(strategies or sorted({s for per in rows.values() for s in per}))
    table = []
    for qid, per in rows.items():
        if not all(n in per for n in names):
            continue
        first = per[names[0]]
        table.append(
            Question(
                qid,
                first.question,
                tuple(first.answers),
                first.type,
                {
                    n: AgentOutcome(
                        per[n].prediction,
                        per[n].wall_seconds,
                        per[n].cost.tokens,
                        per[n].cost.llm_calls,
                    )
                    for n in names
                },
            )
        )
    if not table:
        raise InputError(f"no question was answered by all of {', '.join(names)} in {list(paths)}")
    return table
