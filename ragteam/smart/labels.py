"""Label calibration for the trained agent's answers in labelled formats (multiple choice,
true/false claims).

A 135M generator answering "A"-"D" or true/false leans on one label whatever the question
(docs/benchmarks.md section 17: ARC answers B 70 of 100; PubHealth "false" 83 of 100). The
remedy of "calibrate before use" (Zhao et al., 2021): add a bias per label to the logit of its
first token, chosen on *training* rows of the format (`ragteam train labels smart`), never on a
test set. The biases live beside the adapter they were fitted for (`ADAPTER.labels.json`) and
name its fingerprint: another adapter never gets them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragteam.common.once import loaded_once
from ragteam.errors import InputError
from ragteam.formats import Posed
from ragteam.llm.gguf_files import gguf_fingerprint

FORMATS = ("multiple_choice", "claim")


@dataclass(frozen=True)
class LabelCalibration:
    path: Path
    adapter: str  # the fingerprint of the adapter the biases were fitted for
    biases: dict[str, dict[str, float]]  # format -> label -> logit bias


def calibration_path(adapter: Path) -> Path:
    return adapter.with_suffix(".labels.json")


def load_calibration(adapter: Path) -> LabelCalibration | None:
    """The calibration fitted for `adapter`, if one lies beside it and names it. Read once per
    version of both files (every answer asks; the adapter's fingerprint reads 1 MB of it)."""
    path = calibration_path(adapter)
    if not path.is_file():
        return None
    stamps = tuple((p.stat().st_size, p.stat().st_mtime_ns) for p in (adapter, path))
    return _load(adapter, stamps)


@loaded_once(maxsize=8)
def _load(adapter: Path, _stamps: tuple[tuple[int, int], ...]) -> LabelCalibration | None:
    path = calibration_path(adapter)
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
            "`ragteam train labels smart --data BUILT --adapter ADAPTER` or delete it"
        ) from exc
    if fitted_for != gguf_fingerprint(adapter):
        return None
    return LabelCalibration(path, fitted_for, biases)


def first_token(tokenize: Any, label: str) -> int:
    """The token a generator's answer `label` starts with (the answer opens its line)."""
    return int(tokenize(label)[0])


def label_bias(tokenize: Any, posed: Posed, calibration: LabelCalibration) -> dict[int, float]:
    """Token id -> bias for the labels of this question (empty for an open question)."""
    fmt, labels = posed.format, posed.labels
    fitted = calibration.biases.get(fmt, {})
    bias = {first_token(tokenize, label): fitted[label] for label in labels if label in fitted}
    return {token: b for token, b in bias.items() if b}
