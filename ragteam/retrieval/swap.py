"""Swapping a freshly written index in, without ever deleting what ragteam did not write.

A build writes the new index into `.NAME.building-PID` beside the index folder `NAME`, then
swaps: `NAME` -> `.NAME.old-PID` (rename), staging -> `NAME` (rename), and only then the old
generation is taken apart. Taking it apart removes the files its manifest lists (and the
manifest and sync state), and moves everything else (a note, a folder of documents someone
kept there) back into the new `NAME`: a foreign path is never deleted.

A kill at any point leaves something `recover` puts right at the next load or sync: no `NAME`
but an old generation -> it is renamed back; an old generation beside a good `NAME` -> it is
taken apart as above.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from ragteam.errors import InputError

MANIFEST = "manifest.json"
# Files an index writes beside its manifest's list (the sync state and SQLite's side files).
STATE_FILES = tuple(f"sources.sqlite{tail}" for tail in ("", "-journal", "-wal", "-shm"))


def _rename(source: Path, target: Path) -> None:
    """Every rename of a swap (one place: the fault-injection tests stop each in turn)."""
    os.replace(source, target)


def _remove(path: Path) -> None:
    """Every file removal of a swap (see `_rename`)."""
    os.unlink(path)


def refuse_overlap(source: Path, out: Path) -> None:
    """An index folder that holds its source, or stands inside a source folder, is refused
    before anything is written (paths resolved, links followed)."""
    source, out = source.expanduser().resolve(), out.expanduser().resolve()
    if source == out or out in source.parents:
        raise InputError(
            f"{source} is inside the index folder {out}: writing the index there would replace "
            "it; choose an --out folder that does not hold your documents"
        )
    if source.is_dir() and source in out.parents:
        raise InputError(f"the index {out} would be inside the folder it indexes; put it beside")


def swap_in(staging: Path, out: Path) -> None:
    """Make `staging` the index at `out` (see the module's doc)."""
    if out.exists() and not out.is_dir():
        raise InputError(f"{out} exists and is not a directory; choose another --out")
    if out.exists() and any(out.iterdir()) and not (out / MANIFEST).exists():
        raise InputError(f"{out} is a non-empty folder that is not an index; choose another --out")
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    if out.exists():
        _rename(out, old)
    _rename(staging, out)
    if old.exists():
        take_apart(old, out)


def owned_files(generation: Path) -> set[str]:
    """The paths (relative, POSIX) an index generation wrote: its manifest's files, the
    manifest and the sync state. An unreadable manifest owns only itself and the state."""
    owned = {MANIFEST, *STATE_FILES}
    try:
        files = json.loads((generation / MANIFEST).read_text(encoding="utf-8")).get("files")
    except (OSError, ValueError, AttributeError):
        return owned
    if isinstance(files, dict):
        owned.update(str(name) for name in files)
    return owned


def take_apart(old: Path, out: Path) -> list[Path]:
    """Remove the old generation's own files; move every other file back into `out` (unless
    `out` has that path already). Returns what could not be moved (left in `old`)."""
    owned = owned_files(old)
    stuck: list[Path] = []
    # the manifest says what is owned: it goes last, so a kill midway leaves it to say again
    paths = sorted(
        old.rglob("*"), key=lambda p: (p.name == MANIFEST and p.parent == old, len(p.parts))
    )
    for path in paths:
        if not path.exists() or path.is_dir() and not path.is_symlink():
            continue
        name = path.relative_to(old).as_posix()
        if name in owned:
            _remove(path)
            continue
        target = out / name
        if target.exists() or target.is_symlink():
            stuck.append(path)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        _rename(path, target)
    _remove_empty_dirs(old)
    return stuck


def _remove_empty_dirs(root: Path) -> None:
    folders = [p for p in root.rglob("*") if p.is_dir() and not p.is_symlink()]
    for folder in [*sorted(folders, key=lambda p: -len(p.parts)), root]:
        with contextlib.suppress(OSError):  # not empty: something was left to keep
            folder.rmdir()


def recover(out: Path, alive: Callable[[int], bool]) -> None:
    """Put right what a killed swap left beside `out` (see the module's doc); generations of
    a swap still running (its process alive) are left alone."""
    generations = []
    for folder in out.parent.glob(f".{out.name}.old-*"):
        pid = folder.name.rpartition("-")[2]
        if folder.is_dir() and pid.isdigit() and not alive(int(pid)):
            generations.append(folder)
    generations.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for folder in generations:
        if not (out / MANIFEST).exists() and (folder / MANIFEST).exists():
            if out.exists() and not any(out.iterdir()):
                out.rmdir()
            if not out.exists():
                _rename(folder, out)
                continue
        if (out / MANIFEST).exists():
            take_apart(folder, out)
