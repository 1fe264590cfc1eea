"""Majority vote over the answers of an action's agents, with an explicit tie-break."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ragteam.common.metrics import normalize_answer

TieBreak = Literal["lexicographic", "cheapest", "confidence"]


@dataclass(frozen=True)
class Ballot:
    agent: str
    answer: str
    cost: float = 0.0
    confidence: float = 0.0


def majority_vote(
    ballots: Sequence[Ballot], tie_break: TieBreak = "lexicographic", normalize: bool = False
) -> Ballot:
    """The winning ballot. Answers are grouped by exact text (the authors' rule) or, with
    `normalize`, by their SQuAD-normalized form. Ties between equally large groups go to:
    `lexicographic` the smallest answer text (the authors' rule); `cheapest` the group whose
    cheapest member costs least; `confidence` the group with the highest member confidence.
    Remaining ties fall back to the lexicographic rule, so the result is always deterministic."""
    if not ballots:
        raise ValueError("a vote needs at least one ballot")
    groups: dict[str, list[Ballot]] = {}
    for ballot in ballots:
        key = normalize_answer(ballot.answer) if normalize else ballot.answer
        groups.setdefault(key, []).append(ballot)

    def rank(key: str) -> tuple:
        members = groups[key]
        if tie_break == "cheapest":
            secondary: float = min(b.cost for b in members)
        elif tie_break == "confidence":
            secondary = -max(b.confidence for b in members)
        else:
            secondary = 0.0
        return (-len(members), secondary, min(b.answer for b in members))

    winner = min(groups, key=rank)
    return min(groups[winner], key=lambda b: b.answer)
