"""Question formats: free-form, multiple choice (answered with the option label) and true/false
claims, posed with the instruction texts of SMART's zero-shot evaluations (its Table 6)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Format = Literal["open", "multiple_choice", "claim"]
MULTIPLE_CHOICE = "Given four answer candidates, choose the best answer choice."
TRUE_FALSE = (
    "Is the following statement correct or not? Say true if it's correct; otherwise, say false."
)

NUMBERS = {2: "two", 3: "three", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def pose(question: str, choices: dict[str, str] | None = None, claim: bool = False) -> str:
    """The text a strategy receives for a question of the given format."""
    if choices:
        options = "\n".join(f"{label}: {text}" for label, text in choices.items())
        instruction = MULTIPLE_CHOICE
        if len(choices) != 4:
            count = NUMBERS.get(len(choices), str(len(choices)))
            instruction = instruction.replace("four", count)
        return f"{instruction} Answer with the option label.\n{question}\n{options}"
    if claim:
        return f"{TRUE_FALSE}\n{question}"
    return question


@dataclass(frozen=True)
class Posed:
    """A question as a strategy gets it, built once from the request: the question or claim
    as asked (`stem`), a multiple-choice question's options by label, whether it is a claim to
    judge true or false. Strategies read these fields; only the roles that prompt a model
    render it (`text`)."""

    stem: str
    choices: Mapping[str, str] = field(default_factory=dict)
    claim: bool = False

    @property
    def format(self) -> Format:
        if self.choices:
            return "multiple_choice"
        return "claim" if self.claim else "open"

    @property
    def labels(self) -> list[str]:
        """What the answer is one of: the options' labels, or "true" and "false"."""
        if self.choices:
            return list(self.choices)
        return ["true", "false"] if self.claim else []

    @property
    def text(self) -> str:
        """The prompt text of this question, with its format's instruction (`pose`)."""
        return pose(self.stem, dict(self.choices) or None, self.claim)

    @property
    def search(self) -> str:
        """What to search with: the question without its format's instruction (a
        multiple-choice question's options stay: they name what to look for)."""
        if self.format == "open":
            return self.stem
        return self.text.partition("\n")[2].strip()


def choice_label(prediction: str, choices: dict[str, str]) -> str:
    """The option a reply names: its label ("B", "B: 12pm", "(b)") or its exact option text;
    the reply itself when it names none."""
    text = prediction.strip()
    match = re.match(r"^\(?([A-Za-z0-9])[\):.]?(\s|$)", text)
    if match:
        for label in choices:
            if label.lower() == match.group(1).lower():
                return label
    for label, option in choices.items():
        if text.lower().rstrip(".") == option.lower():
            return label
    return text


def truth_label(prediction: str) -> str:
    words = re.findall(r"[a-z]+", prediction.lower())
    for word in words[:3]:
        if word in ("true", "yes", "correct"):
            return "true"
        if word in ("false", "no", "incorrect"):
            return "false"
    return prediction.strip()
