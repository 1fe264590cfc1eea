"""Walking an indexed folder: every file is either a candidate (with its stat) or reported
with why it is left out. Links are not followed (a link may point outside the folder), hidden
folders such as `.git` are left out as one entry each, and a name that is not UTF-8 is
reported rather than crashing the walk."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISBLK, S_ISCHR, S_ISFIFO, S_ISLNK, S_ISREG, S_ISSOCK


@dataclass(frozen=True)
class Found:
    path: str  # relative, with `/`
    file: Path
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class LeftOut:
    path: str
    status: str  # skipped | failed
    reason: str


def _name_ok(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def scan(root: Path) -> tuple[list[Found], list[LeftOut]]:
    """Every file under `root` (or `root` itself, a file): found, or left out with why. A
    folder that cannot be listed
    is `failed` with its path ending in `/` (`unreadable` finds them): its files were not
    seen, which is not the same as gone."""
    found: list[Found] = []
    left: list[LeftOut] = []
    if not root.is_dir():  # one file: the whole of what is indexed
        _one(root, root.name, root.name, found, left)
        return found, left
    errors: list[OSError] = []
    for folder, dirs, files in os.walk(root, followlinks=False, onerror=errors.append):
        base = Path(folder)
        relative = base.relative_to(root).as_posix()
        prefix = "" if relative == "." else relative + "/"
        for name in sorted(dirs):
            full = base / name
            if (why := _unstatable(full)) is not None:
                left.append(LeftOut(prefix + name + "/", "failed", why))
                dirs.remove(name)
            elif not _name_ok(name):
                left.append(LeftOut(prefix + ascii(name), "failed", "name is not UTF-8: rename it"))
                dirs.remove(name)
            elif full.is_symlink():
                left.append(LeftOut(prefix + name, "skipped", "a link to a folder: not followed"))
                dirs.remove(name)
            elif name.startswith("."):
                left.append(LeftOut(prefix + name + "/", "skipped", "a hidden folder"))
                dirs.remove(name)
        dirs.sort()
        for name in sorted(files):
            _one(base / name, prefix + name, name, found, left)
    for error in errors:
        where = Path(error.filename or root)
        relative = where.relative_to(root).as_posix() if where != root else ""
        reason = f"cannot be read ({error.strerror}): its files are kept as they were"
        left.append(LeftOut(f"{relative}/" if relative else "./", "failed", reason))
    return found, left


def unreadable(left: list[LeftOut]) -> tuple[str, ...]:
    """Path prefixes of the folders that could not be listed ("" for the root itself)."""
    return tuple(
        "" if x.path == "./" else x.path
        for x in left
        if x.status == "failed" and x.path.endswith("/")
    )


def _unstatable(full: Path) -> str | None:
    """Why `full` cannot even be looked at (a path over the system's limit), or None."""
    try:
        full.lstat()
    except OSError as exc:
        return f"cannot be read ({exc.strerror}); the rest of the folder is read"
    return None


def _one(full: Path, rel: str, name: str, found: list[Found], left: list[LeftOut]) -> None:
    """One file, looked at once (`lstat`: not a link, it is the file's own stat)."""
    try:
        stat = os.lstat(full)
    except OSError as exc:  # a path over the system's limit, or gone meanwhile
        why = f"cannot be read ({exc.strerror}); the rest of the folder is read"
        left.append(LeftOut(rel, "failed", why))
        return
    if not _name_ok(name):
        left.append(
            LeftOut(
                rel.encode("utf-8", "backslashreplace").decode(),
                "failed",
                "file name is not UTF-8: rename it",
            )
        )
        return
    if S_ISLNK(stat.st_mode):
        why = f"{_link(full)}: links are not followed (copy the file in)"
        left.append(LeftOut(rel, "skipped", why))
        return
    if name.startswith("."):
        left.append(LeftOut(rel, "skipped", "a hidden file"))
        return
    if not S_ISREG(stat.st_mode):  # never opened: a pipe would wait for a writer for ever
        left.append(LeftOut(rel, "skipped", f"{_kind(stat.st_mode)}, not a regular file"))
        return
    found.append(Found(rel, full, stat.st_size, stat.st_mtime_ns))


def _link(full: Path) -> str:
    """What a link is: "a link", "a dangling link" (its target is missing) or "a loop of links"."""
    try:
        full.resolve(strict=True)
    except RuntimeError:
        return "a loop of links"
    except OSError as exc:
        return "a loop of links" if exc.errno == errno.ELOOP else "a dangling link"
    return "a link"


def _kind(mode: int) -> str:
    if S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if S_ISSOCK(mode):
        return "a socket"
    return "a device" if S_ISCHR(mode) or S_ISBLK(mode) else "a special file"
