"""Atomic file writes: a temporary file beside the target, fsynced, then renamed over it.

A reader never sees half a file, and a kill in the middle leaves the old file intact.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ragteam.errors import StorageError


@contextlib.contextmanager
def storage(what: object) -> Iterator[None]:
    """Failures of the disk under a block (a full disk, a read-only folder, SQLite's "disk
    I/O error") as a `StorageError` naming `what`, not a traceback."""
    try:
        yield
    except (sqlite3.OperationalError, OSError) as exc:
        raise StorageError.writing(what, OSError(str(exc)), verb="use") from exc


def write_text(path: Path, text: str) -> None:
    write_lines(path, [text])


def write_lines(path: Path, lines: Iterable[str]) -> None:
    """Write the strings one after another (each carries its own newline). A failed write
    (a full disk) is a `StorageError` and leaves the old file as it was."""

    def fill(tmp: Path) -> None:
        with tmp.open("w", encoding="utf-8") as handle:
            for line in lines:
                handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    _through_temp(path, fill)


def copy_file(source: Path, target: Path) -> None:
    """Copy `source` over `target` atomically (a backup is whole or is the old one)."""

    def fill(tmp: Path) -> None:
        shutil.copyfile(source, tmp)
        with tmp.open("rb+") as handle:
            os.fsync(handle.fileno())

    _through_temp(target, fill)


def _through_temp(target: Path, fill: Callable[[Path], None]) -> None:
    """`fill` writes a temporary file beside `target` (and fsyncs it), which then replaces it."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        fill(tmp)
        os.replace(tmp, target)
    except OSError as exc:
        raise StorageError.writing(target, exc) from exc
    finally:
        tmp.unlink(missing_ok=True)


def write_json(path: Path, data: Any, *, indent: int | None = 2, sort_keys: bool = False) -> None:
    text = json.dumps(data, indent=indent, ensure_ascii=False, sort_keys=sort_keys)
    write_text(path, text + "\n")


def write_jsonl(path: Path, rows: Iterable[Any]) -> None:
    write_lines(path, (json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
