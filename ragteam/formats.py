"""Question formats: free-form, multiple choice (answered with the option label) and true/false
claims, posed with the instruction texts of SMART's zero-shot evaluations (its Table 6)."""

from __future__ import annotations

import re

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


def search_text(posed: str) -> str:
    """What to search with for a posed question: without the format's instruction line (the
    options of a multiple-choice question stay: they name what to look for)."""
    head, sep, rest = posed.partition("\n")
    if sep and posed_format(posed)[0] != "open":
        return rest.strip()
    return posed


_OPTION = re.compile(r"^([A-Za-z0-9]): ")


def posed_format(posed: str) -> tuple[str, list[str]]:
    """The format of a question as `pose` wrote it ("open", "multiple_choice", "claim") and the
    labels its answer is one of (the options' labels; "true" and "false")."""
    head, _, rest = posed.partition("\n")
    if head == TRUE_FALSE:
        return "claim", ["true", "false"]
    if not (head.startswith("Given ") and MULTIPLE_CHOICE.split("four ")[1] in head):
        return "open", []
    announced = head.split()[1]  # "four", "five", "12": how many options follow
    count = {"four": 4, **{name: n for n, name in NUMBERS.items()}}.get(announced)
    count = count or (int(announced) if announced.isdigit() else None)
    labels: list[str] = []
    for line in reversed(rest.split("\n")):
        match = _OPTION.match(line)
        if not match or len(labels) == count:
            break
        labels.append(match.group(1))
    return "multiple_choice", labels[::-1]


def posed_parts(posed: str) -> tuple[str, str, dict[str, str]]:
    """A posed question taken apart: its format, the question or claim itself, and for
    multiple choice the options by label (as `pose` wrote them)."""
    fmt, labels = posed_format(posed)
    if fmt == "open":
        return fmt, posed, {}
    rest = posed.partition("\n")[2]
    if fmt == "claim":
        return fmt, rest.strip(), {}
    lines = rest.split("\n")
    options = lines[len(lines) - len(labels) :]
    choices = {label: line[len(label) + 2 :] for label, line in zip(labels, options, strict=True)}
    return fmt, "\n".join(lines[: len(lines) - len(labels)]).strip(), choices
