"""Digests of files computed once per process per file version. An index is verified on
every load (`ragteam.answer(index=PATH)` loads it per call): its files, its passages and its
source corpus are hashed the first time, and later loads of unchanged files reuse the result.
A file version is its path, size, mtime and inode; as git does with "racy" files, one modified
within the last 2 seconds is hashed every time (a same-size rewrite in the same clock tick
would keep its mtime)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

RACY_NS = 2_000_000_000
_LIMIT = 4096


class DigestMemo:
    """Results keyed by (what, the versions of the files it was computed from)."""

    def __init__(self) -> None:
        self._known: dict[tuple[object, ...], str] = {}
        self._lock = threading.Lock()

    def get(self, what: str, files: Iterable[Path], compute: Callable[[], str]) -> str:
        key = _versions(what, files)
        if key is not None:
            with self._lock:
                known = self._known.get(key)
            if known is not None:
                return known
        value = compute()
        if key is not None:
            with self._lock:
                if len(self._known) >= _LIMIT:
                    self._known.clear()
                self._known[key] = value
        return value


def _versions(what: str, files: Iterable[Path]) -> tuple[object, ...] | None:
    now = time.time_ns()
    key: list[object] = [what]
    for path in files:
        stat = path.stat()
        if now - stat.st_mtime_ns < RACY_NS:
            return None
        key.append((str(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino))
    return tuple(key)


MEMO = DigestMemo()  # one per process: a cache of pure functions of file contents
