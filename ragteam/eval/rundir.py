"""A run directory: `config.json` (what was run) and `results.jsonl` (one line per question and
strategy, fsynced). Interrupted runs resume; a different configuration is refused."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from ragteam.common import atomic
from ragteam.errors import InputError, StorageError
from ragteam.eval.row import EvalRow

CONFIG = "config.json"
RESULTS = "results.jsonl"


def write_json_atomic(path: Path, data: Any) -> None:
    atomic.write_json(path, data, sort_keys=True)


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

    def rows(self) -> list[EvalRow]:
        """The results, typed; a retried (question, strategy) keeps its last row."""
        if not self.results_path.exists():
            return []
        rows = []
        with self.results_path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if not raw.endswith(b"\n"):
                    break  # a line cut by an interruption; `open` drops it before appending
                where = f"{self.results_path.name}:{number}"
                try:
                    data = json.loads(raw.decode("utf-8"))
                except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                    reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8"
                    raise InputError(f"{where} is corrupt ({reason})") from exc
                rows.append(EvalRow.from_dict(data, where))
        latest: dict[tuple[str, str], EvalRow] = {}
        for row in rows:
            latest.pop((row.id, row.strategy), None)
            latest[(row.id, row.strategy)] = row
        return list(latest.values())

    def results(self) -> list[dict[str, Any]]:
        """The results as plain dicts (what `ragteam.evaluate` returns)."""
        return [row.to_dict() for row in self.rows()]

    def done(self) -> set[tuple[str, str]]:
        """(question, strategy) pairs finished for good: a row that failed on the model or the
        server (an outage, a timeout) is asked again when the run resumes."""
        return {(r.id, r.strategy) for r in self.rows() if not r.retryable}

    def append(self, row: EvalRow | dict[str, Any]) -> None:
        data = row.to_dict() if isinstance(row, EvalRow) else row
        line = json.dumps(data, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            try:
                with self.results_path.open("a", encoding="utf-8") as handle:
                    handle.write(line)
                    handle.flush()
                    os.fsync(handle.fileno())
            except OSError as exc:  # a cut line is dropped when the run resumes
                raise StorageError.writing(self.results_path, exc) from exc

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
