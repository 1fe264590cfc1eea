"""The fitted decisions of the verdicts: a logistic regression over a claim's features
(true/false) and a softmax over each option's features (multiple choice), fitted on training
rows only (`ragteam train verdict`), stored as JSON beside the span reader they were fitted with
(`ragteam/data/verdict-minilm.json`) and refused with another reader.

A claim's decision falls back to the training majority label where the fitted one did not beat
it on the held training rows: a verdict never does worse, on training data, than always saying
the majority label."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragteam.common.linear import Linear
from ragteam.common.once import loaded_once
from ragteam.errors import InputError

FORMAT = "ragteam-verdict/1"
FILE_NAME = "verdict-minilm.json"
RETRAIN = "ragteam train verdict --data TRAIN_DIR/formats --index FORMATS_INDEX --out FILE"


@dataclass(frozen=True)
class ClaimDecision:
    linear: Linear
    threshold: float  # probability of "true" at or above which the claim is true
    majority: str  # the training majority label
    use_majority: bool  # the fitted decision did not beat the majority on held rows
    held: dict[str, float] = field(default_factory=dict)  # accuracy, majority, rows

    def probability(self, x: np.ndarray) -> float:
        return float(1 / (1 + np.exp(-float(self.linear(x[None, :])[0]))))

    def label(self, p_true: float) -> str:
        if self.use_majority:
            return self.majority
        return "true" if p_true >= self.threshold else "false"


@dataclass(frozen=True)
class ChoiceDecision:
    linear: Linear
    held: dict[str, float] = field(default_factory=dict)

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        logits = self.linear(rows)
        e = np.exp(logits - logits.max())
        return e / e.sum()


@dataclass(frozen=True)
class Verdicts:
    claim: ClaimDecision
    choice: ChoiceDecision
    reader: str  # identity of the span reader the features were read with
    card: dict[str, Any] = field(default_factory=dict)  # data, rows, seconds

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, **asdict(self)}, indent=1)


def default_verdicts() -> Path:
    from importlib.resources import files

    return Path(str(files("ragteam.data").joinpath(FILE_NAME)))


def load_verdicts(reader_identity: str, path: Path | None = None) -> Verdicts:
    """The fitted verdicts at `path` (the shipped file by default). Missing, unreadable or
    fitted with another reader: an InputError naming the file and the command that refits."""
    path = path or default_verdicts()
    try:
        stamp = (path.stat().st_size, path.stat().st_mtime_ns)
    except OSError as exc:
        raise InputError(
            f"no fitted verdicts at {path} ({exc}): fit them with `{RETRAIN}`"
        ) from exc
    verdicts = _load(path, stamp)
    if verdicts.reader != reader_identity:
        raise InputError(
            f"the verdicts in {path} were fitted with the span reader {verdicts.reader}, not "
            f"{reader_identity}: refit them with `{RETRAIN}`"
        )
    return verdicts


@loaded_once(maxsize=4)
def _load(path: Path, _stamp: tuple[int, int]) -> Verdicts:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}, expected {FORMAT!r}")
        claim, choice = data["claim"], data["choice"]
        return Verdicts(
            ClaimDecision(
                Linear(**claim["linear"]),
                float(claim["threshold"]),
                str(claim["majority"]),
                bool(claim["use_majority"]),
                dict(claim.get("held", {})),
            ),
            ChoiceDecision(Linear(**choice["linear"]), dict(choice.get("held", {}))),
            str(data["reader"]),
            dict(data.get("card", {})),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(
            f"{path} is not a verdict file ({exc}): refit it with `{RETRAIN}`"
        ) from exc
