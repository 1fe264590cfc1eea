"""Atomic file writes: a temporary file beside the target, fsynced, then renamed over it.

A reader never sees half a file, and a kill in the middle leaves the old file intact.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def write_text(path: Path, text: str) -> None:
    write_lines(path, [text])


def write_lines(path: Path, lines: Iterable[str]) -> None:
    """Write the strings one after another (each carries its own newline)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as handle:
            for line in lines:
                handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_json(path: Path, data: Any, *, indent: int | None = 2, sort_keys: bool = False) -> None:
    text = json.dumps(data, indent=indent, ensure_ascii=False, sort_keys=sort_keys)
    write_text(path, text + "\n")


def write_jsonl(path: Path, rows: Iterable[Any]) -> None:
    write_lines(path, (json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
