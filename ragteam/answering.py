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
        said = result.text
        result.text = choice_label(said, choices)
        if result.text != said.strip() and result.trace is not None and _by_text(said, choices):
            result.trace.note(
                "format",
                f"answered with an option's text; mapped to its label {result.text}",
                event="label_from_text",
            )
    elif claim:
        result.text = truth_label(result.text)
    return result


def _by_text(said: str, choices: dict[str, str]) -> bool:
    """Whether a reply named an option by its text (not by its label)."""
    text = said.strip().lower().rstrip(".")
    return any(text == option.lower() for option in choices.values())
