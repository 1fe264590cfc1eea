"""One line of a run's `results.jsonl`, typed and versioned: the runner writes `EvalRow`s, and
report, router and server read them back as `EvalRow`s. Version 2 added `version`,
`grounding` and a complete `cost`; rows of older runs (no `version`) still load, with what they
lack filled in."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ragteam.errors import InputError

VERSION = 2


@dataclass
class Cost:
    llm_calls: float = 0.0
    prompt_tokens: float = 0.0
    completion_tokens: float = 0.0
    seconds: float = 0.0
    cache_hits: float = 0.0
    parse_failures: float = 0.0

    @property
    def tokens(self) -> float:
        return self.prompt_tokens + self.completion_tokens

    @classmethod
    def from_totals(cls, totals: dict[str, Any]) -> Cost:
        """From `Trace.totals()` (or an older row's cost), ignoring what is not a cost."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: float(v) for k, v in totals.items() if k in known})


@dataclass
class EvalRow:
    id: str
    strategy: str
    metrics: dict[str, float]
    cost: Cost
    wall_seconds: float
    question: str = ""
    prediction: str = ""
    answers: list[str] = field(default_factory=list)
    type: str | None = None
    citations: list[dict[str, Any]] = field(default_factory=list)
    # supported | partly_supported | not_supported | no_evidence | failed | unchecked (older
    # rows: cited | uncited; '' in version 1 rows)
    grounding: str = ""
    support_score: float | None = None  # the answer's support score (None: not checked)
    parse_failures_by_role: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    trace: dict[str, Any] = field(default_factory=dict)
    version: int = VERSION

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any, where: str) -> EvalRow:
        """A row read from a file; `where` (file:line) names it in the error for a line that
        is not a result row."""
        if not isinstance(data, dict):
            raise InputError(f"{where} is not a result row (a JSON object)")
        for key, kind in _REQUIRED.items():
            if not isinstance(data.get(key), kind):
                raise InputError(
                    f"{where} is not a result row: '{key}' is missing or of a wrong type"
                )
        for key, kind in _OPTIONAL.items():
            if data.get(key) is not None and not isinstance(data[key], kind):
                raise InputError(f"{where} is not a result row: '{key}' is of a wrong type")
        steps = (data.get("trace") or {}).get("steps", [])
        if not isinstance(steps, list) or not all(isinstance(x, dict) for x in steps):
            raise InputError(f"{where} is not a result row: its trace's steps are not a list")
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        try:
            values["cost"] = Cost.from_totals(data["cost"])
            values["version"] = int(data.get("version", 1))
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"{where} is not a result row: a cost or its version is not a number ({exc})"
            ) from exc
        return cls(**values)

    @property
    def retryable(self) -> bool:
        """Its model call failed (not its input): worth asking again on resume."""
        return str(self.error or "").startswith(RETRIED_ERRORS)


RETRIED_ERRORS = ("ModelError", "ServerUnreachable")

_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "id": str,
    "strategy": str,
    "metrics": dict,
    "cost": dict,
    "wall_seconds": (int, float),
}

# present in a row only sometimes; when present, of this type (None counts as absent)
_OPTIONAL: dict[str, type | tuple[type, ...]] = {
    "question": str,
    "prediction": str,
    "answers": list,
    "citations": list,
    "grounding": str,
    "parse_failures_by_role": dict,
    "trace": dict,
}
