"""The one path from a question to a labelled answer, shared by `ragteam.answer` and the eval
runner: pose the question (multiple choice, claim or open), run the strategy, label the reply."""

from __future__ import annotations

from ragteam.formats import choice_label, pose, truth_label
from ragteam.strategies.base import Context, Strategy
from ragteam.types import Answer


def run_posed(
    strategy: Strategy,
    question: str,
    ctx: Context,
    choices: dict[str, str] | None = None,
    claim: bool = False,
) -> Answer:
    """Answer `question` with `strategy`; with `choices` the answer is an option label, with
    `claim` it is "true" or "false"."""
    result = strategy.run(pose(question, choices, claim), ctx)
    result.question = question
    if choices:
        result.text = choice_label(result.text, choices)
    elif claim:
        result.text = truth_label(result.text)
    return result
