"""Reading JSONL with errors that name the file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragteam.errors import InputError


def read_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; anything else is an `InputError`."""
    if not path.is_file():
        raise InputError(f"no data file at {path}")
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"{path}:{number}: not UTF-8 text (byte {exc.start}); save the file as UTF-8"
                ) from exc
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
            if not isinstance(row, dict):
                raise InputError(f"{path}:{number}: expected a JSON object")
            yield number, row
