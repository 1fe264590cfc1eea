"""Index verification, with digests of files computed once per process per file version. An
index is verified on every load (`ragteam.answer(index=PATH)` loads it per call): its files,
its passages and its source corpus are hashed the first time, and later loads of unchanged
files reuse the result. A sync also remembers the versions it verified in the index folder
(`.digests.json`): a later process, a sync or a load, does not read those files again while
their size, mtime and inode stay the same (git's index trusts a file's stat the same way).
A file version is its path, size, mtime and inode; as git does with "racy" files, one modified
within the last 2 seconds is hashed every time (a same-size rewrite in the same clock tick
would keep its mtime)."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragteam.errors import IndexUnusable
from ragteam.retrieval.corpus import source_checksum, source_files

if TYPE_CHECKING:
    from ragteam.retrieval.manifest import Manifest

RACY_NS = 2_000_000_000
KNOWN_FILE = ".digests.json"  # the versions a sync verified, beside the manifest
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


def _owned(first: str, names: list[str]) -> bool:
    """Whether a path starting with `first` is the index's: `passages.jsonl`, or a retriever
    kind's files, named after it (`bm25/...`, `dense.faiss`, `dense-001.faiss`)."""
    return any(first == n or first.startswith((f"{n}.", f"{n}-")) for n in names)


def _indexed_files(directory: Path) -> list[Path]:
    """The files an index's manifest lists: what the index wrote, never the manifest, the
    sync state or a file someone else left in the folder (notes, a `.DS_Store`)."""
    from ragteam.retrieval.kinds import KINDS

    names = ["passages", "segments", *KINDS.names()]
    return sorted(
        p
        for p in directory.rglob("*")
        if p.is_file()
        and _owned(p.relative_to(directory).parts[0], names)
        and not p.name.startswith(".")
    )


def _segment_of(relative: Path) -> str | None:
    """The segment folder (`segments/NNNN`) a file of the index lies in, if any: a folder no
    manifest lists yet is a sync's work in progress, not part of this index."""
    parts = relative.parts
    return "/".join(parts[:2]) if len(parts) > 2 and parts[0] == "segments" else None


def verify_files(directory: Path, manifest: Manifest, hint: str, remember: bool = False) -> None:
    """Every file of the index is listed with its size and checksum, and matches: a manifest
    whose list was emptied or cut does not turn the checks off. A file whose version (size,
    mtime, inode) and recorded checksum are those remembered before (`KNOWN_FILE`) is not read
    again; `remember`: write the versions verified now (a sync, and every load: a server's next
    start on a big index skips the hashing; an entry names its file's inode and mtime, so one
    left by another process never vouches for a file written since)."""
    listed = {s.folder for s in manifest.segments if s.folder}
    present = {
        p.relative_to(directory).as_posix()
        for p in _indexed_files(directory)
        if _segment_of(p.relative_to(directory)) in listed | {None}
    }
    unlisted = sorted(present - set(manifest.files))
    if unlisted:
        raise IndexUnusable(
            f"the manifest of {directory} does not list {', '.join(unlisted[:3])}: it was edited "
            f"or the index is incomplete; {hint}"
        )
    known, now, seen = _remembered(directory), time.time_ns(), {}
    for name, recorded in manifest.files.items():
        path = directory / name
        stat = path.stat() if path.is_file() else None
        version = stat and [stat.st_size, stat.st_mtime_ns, stat.st_ino, recorded.sha256]
        if (
            stat is None
            or stat.st_size != recorded.size
            or (known.get(name) != version and sha256_of(path) != recorded.sha256)
        ):
            raise IndexUnusable(f"{path} is missing or changed since the build; {hint}")
        if now - stat.st_mtime_ns >= RACY_NS:  # a file written just now is hashed again
            seen[name] = version
    if remember and seen != known:
        _write_known(directory, seen)


def remember_written(directory: Path, manifest: Manifest) -> None:
    """Remember the versions of the index files this process has just written and hashed into
    `manifest` (a sync, holding the index's lock: no one wrote them since), as `verify_files`
    would after hashing them again: the next load (a server's first start after a build)
    hashes none of them. A file written in the last RACY_NS is left for that load to hash."""
    now, seen = time.time_ns(), {}
    for name, recorded in manifest.files.items():
        stat = (directory / name).stat()
        if stat.st_size == recorded.size and now - stat.st_mtime_ns >= RACY_NS:
            seen[name] = [stat.st_size, stat.st_mtime_ns, stat.st_ino, recorded.sha256]
    if seen != _remembered(directory):
        _write_known(directory, seen)


def _write_known(directory: Path, seen: dict[str, Any]) -> None:
    import contextlib

    from ragteam.common.atomic import write_json

    # a read-only index: the next load hashes its files again, nothing else
    with contextlib.suppress(OSError):
        write_json(directory / KNOWN_FILE, seen, indent=None)


def _remembered(directory: Path) -> dict[str, Any]:
    """The file versions a sync verified (name -> [size, mtime ns, inode, SHA-256]); empty
    when the file is missing or unreadable (every file is then hashed)."""
    try:
        data = json.loads((directory / KNOWN_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def verify_source(directory: Path, manifest: Manifest, hint: str) -> None:
    source = manifest.source
    path = Path(source.path)
    if not source.path or not path.exists() or source.is_folder:
        return  # a synced folder is allowed to move on: `ragteam index info` says what changed
    checksum = MEMO.get("source", source_files(path), lambda: source_checksum(path))
    if checksum != source.checksum:
        raise IndexUnusable(f"{path} changed after the index at {directory} was built; {hint}")


def file_digests(directory: Path) -> dict[str, dict[str, Any]]:
    """Size and SHA-256 of every index file: a same-size corruption is caught too."""
    return {
        p.relative_to(directory).as_posix(): {"size": p.stat().st_size, "sha256": sha256_of(p)}
        for p in _indexed_files(directory)
    }


def sha256_of(path: Path) -> str:
    """The file's digest; once per process per file version (`digests.MEMO`)."""

    def compute() -> str:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()

    return MEMO.get("sha256", [path], compute)
