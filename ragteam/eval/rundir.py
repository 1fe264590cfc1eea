"""A run directory: `config.json` (what was run) and `results.jsonl` (one line per question and
strategy, fsynced). Interrupted runs resume; a different configuration is refused."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from ragteam import atomic
from ragteam.errors import InputError

CONFIG = "config.json"
RESULTS = "results.jsonl"


def write_json_atomic(path: Path, data: Any) -> None:
    atomic.write_json(path, data, sort_keys=True)


RETRIED_ERRORS = ("ModelError", "ServerUnreachable")


def retryable(row: dict[str, Any]) -> bool:
    """A row whose model call failed (not its input): worth asking again on resume."""
    return str(row.get("error") or "").startswith(RETRIED_ERRORS)


def config_differences(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    keys = sorted(set(old) | set(new))
    found: list[str] = []
    for key in keys:
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            found.extend(config_differences(a, b, f"{prefix}{key}."))
        elif a != b:
            found.append(f"{prefix}{key}: {a!r} -> {b!r}")
    return found


class RunDir:
    """Results of one evaluation run; appends are thread-safe and durable line by line."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    @property
    def results_path(self) -> Path:
        return self.path / RESULTS

    def open(self, config: dict[str, Any]) -> None:
        """Create the run, or check that an existing one was made with the same config."""
        if self.path.exists() and not self.path.is_dir():
            raise InputError(f"--out {self.path} is a file; name a folder for the run")
        self.path.mkdir(parents=True, exist_ok=True)
        config_path = self.path / CONFIG
        if config_path.exists():
            old = json.loads(config_path.read_text(encoding="utf-8"))
            differences = config_differences(old, config)
            if differences:
                raise InputError(
                    f"{self.path} holds results of a different configuration "
                    f"({'; '.join(differences)}); use another --out, or delete it to start over"
                )
        else:
            write_json_atomic(config_path, config)
        self._drop_partial_line()

    def config(self) -> dict[str, Any]:
        path = self.path / CONFIG
        if not path.is_file():
            raise InputError(f"{self.path} is not a run directory (no {CONFIG})")
        return json.loads(path.read_text(encoding="utf-8"))

    def results(self) -> list[dict[str, Any]]:
        if not self.results_path.exists():
            return []
        rows = []
        with self.results_path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if not raw.endswith(b"\n"):
                    break  # a line cut by an interruption; `open` drops it before appending
                where = f"{self.results_path.name}:{number}"
                try:
                    row = json.loads(raw.decode("utf-8"))
                except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                    reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8"
                    raise InputError(f"{where} is corrupt ({reason})") from exc
                rows.append(check_row(row, where))
        latest: dict[tuple[str, str], dict[str, Any]] = {}
        for row in rows:  # a retried pair keeps its last row
            latest.pop((row["id"], row["strategy"]), None)
            latest[(row["id"], row["strategy"])] = row
        return list(latest.values())

    def done(self) -> set[tuple[str, str]]:
        """(question, strategy) pairs finished for good: a row that failed on the model or the
        server (an outage, a timeout) is asked again when the run resumes."""
        return {(r["id"], r["strategy"]) for r in self.results() if not retryable(r)}

    def append(self, row: dict[str, Any]) -> None:
        line = json.dumps(row, ensure_ascii=False, default=str) + "\n"
        with self._lock, self.results_path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def _drop_partial_line(self) -> None:
        path = self.results_path
        if not path.exists():
            return
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data[: data.rfind(b"\n") + 1]
            with path.open("r+b") as handle:
                handle.truncate(len(keep))
                handle.flush()
                os.fsync(handle.fileno())


_ROW_FIELDS: dict[str, type | tuple[type, ...]] = {
    "id": str,
    "strategy": str,
    "metrics": dict,
    "cost": dict,
    "wall_seconds": (int, float),
}


def check_row(row: Any, where: str) -> dict[str, Any]:
    """A results line must be an object with the fields every reader uses."""
    if not isinstance(row, dict):
        raise InputError(f"{where} is not a result row (a JSON object)")
    for key, kind in _ROW_FIELDS.items():
        if not isinstance(row.get(key), kind):
            raise InputError(f"{where} is not a result row: '{key}' is missing or of a wrong type")
    return row
