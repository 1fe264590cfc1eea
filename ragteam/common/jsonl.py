"""Reading JSONL with errors that name the file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragteam.errors import InputError

MAX_LINE_BYTES = 32 * 2**20  # one row at most: a longer "line" (a disk image) is refused


def _lines(handle: Any, path: Path) -> Iterator[tuple[int, bytes]]:
    """(number, bytes) of each line, read at most MAX_LINE_BYTES at a time: a line without an
    end in sight is an InputError, never a read of the whole file into memory."""
    number = 0
    while raw := handle.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(raw) > MAX_LINE_BYTES:
            raise InputError(
                f"{path}:{number}: a line over {MAX_LINE_BYTES // 2**20} MB is not a JSONL row "
                "(a binary file named .jsonl?); split the file one object a line"
            )
        if b"\0" in raw:
            raise InputError(f"{path}:{number}: holds NUL bytes: binary, not JSON lines")
        yield number, raw


def read_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; anything else is an `InputError`."""
    if not path.is_file():
        raise InputError(f"no data file at {path}")
    with path.open("rb") as handle:
        for number, raw in _lines(handle, path):
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
