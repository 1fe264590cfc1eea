"""Label calibration for the trained agent's answers in labelled formats (multiple choice,
true/false claims).

A 135M generator answering "A"-"D" or true/false leans on one label whatever the question
(docs/benchmarks.md section 17: ARC answers B 70 of 100; PubHealth "false" 83 of 100). The
remedy of "calibrate before use" (Zhao et al., 2021): add a bias per label to the logit of its
first token, chosen on *training* rows of the format (`bench/label_calibration.py`), never on a
test set. The biases live beside the adapter they were fitted for (`ADAPTER.labels.json`) and
name its fingerprint: another adapter never gets them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragteam.errors import InputError
from ragteam.formats import MULTIPLE_CHOICE, NUMBERS, TRUE_FALSE
from ragteam.llm.gguf_files import gguf_fingerprint

FORMATS = ("multiple_choice", "claim")
_OPTION = re.compile(r"^([A-Za-z0-9]): ")
_CHOICE_HEAD = MULTIPLE_CHOICE.split("four ")[1]  # "answer candidates, choose ..."


@dataclass(frozen=True)
class LabelCalibration:
    path: Path
    adapter: str  # the fingerprint of the adapter the biases were fitted for
    biases: dict[str, dict[str, float]]  # format -> label -> logit bias


def calibration_path(adapter: Path) -> Path:
    return adapter.with_suffix(".labels.json")


def load_calibration(adapter: Path) -> LabelCalibration | None:
    """The calibration fitted for `adapter`, if one lies beside it and names it."""
    path = calibration_path(adapter)
    if not path.is_file():
        return None
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data.get("biases"), dict):
            raise TypeError("'biases' must map formats to {label: bias}")
        biases = {
            fmt: {str(label): float(b) for label, b in data["biases"][fmt].items()}
            for fmt in data["biases"]
            if fmt in FORMATS
        }
        fitted_for = str(data["adapter"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(
            f"{path} is not a label calibration ({exc}); rebuild it with "
            "bench/label_calibration.py or delete it"
        ) from exc
    if fitted_for != gguf_fingerprint(adapter):
        return None
    return LabelCalibration(path, fitted_for, biases)


def posed_labels(posed: str) -> tuple[str, list[str]]:
    """The format of a posed question and the labels its answer is one of."""
    head, _, rest = posed.partition("\n")
    if head == TRUE_FALSE:
        return "claim", ["true", "false"]
    if head.startswith("Given ") and _CHOICE_HEAD in head:
        count = _choice_count(head.split()[1])
        labels = []
        for line in reversed(rest.split("\n")):
            match = _OPTION.match(line)
            if not match or len(labels) == count:
                break
            labels.append(match.group(1))
        return "multiple_choice", labels[::-1]
    return "open", []


def _choice_count(word: str) -> int | None:
    """How many options the instruction announces ("four", "five", "12")."""
    words = {"four": 4, **{name: n for n, name in NUMBERS.items()}}
    return words.get(word) or (int(word) if word.isdigit() else None)


def first_token(tokenize: Any, label: str) -> int:
    """The token a generator's answer `label` starts with (the answer opens its line)."""
    return int(tokenize(label)[0])


def label_bias(tokenize: Any, posed: str, calibration: LabelCalibration) -> dict[int, float]:
    """Token id -> bias for the labels of this question (empty for an open question)."""
    fmt, labels = posed_labels(posed)
    fitted = calibration.biases.get(fmt, {})
    bias = {first_token(tokenize, label): fitted[label] for label in labels if label in fitted}
    return {token: b for token, b in bias.items() if b}
