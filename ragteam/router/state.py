"""The router's state file: versioned JSON, written atomically, read-modify-write under a file
lock, the previous good version kept as `.bak`."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from ragteam.common import atomic
from ragteam.errors import RagteamError
from ragteam.router.features import features_from_dict
from ragteam.router.linucb import LinUCB
from ragteam.router.rewards import Reward
from ragteam.router.simulate import Router, Setup

STATE_VERSION = 1


class RouterStateError(RagteamError):
    """A router state file is missing, corrupt or from another version."""


def default_state_path() -> Path:
    """Where the router's state lives unless a path is given (the user's data folder)."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("ragteam")) / "router.json"


APPLIED_KEPT = 10_000


@dataclass
class RouterState:
    setup: dict[str, Any]
    actions: list[list[str]]
    features: dict[str, Any]
    model: dict[str, Any]
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    updates: int = 0
    version: int = STATE_VERSION
    # the latest feedback ids applied (at most APPLIED_KEPT): a crash after the state is
    # written but before its log entry is marked done cannot apply the same feedback twice
    applied: list[str] = field(default_factory=list)

    def note_applied(self, feedback_id: str) -> None:
        self.applied = [*self.applied, feedback_id][-APPLIED_KEPT:]

    @classmethod
    def from_router(cls, router: Router) -> RouterState:
        setup = asdict(router.setup)
        return cls(
            setup,
            [list(a) for a in router.actions],
            router.features.to_dict(),
            router.model.to_dict(),
        )

    def router(self) -> Router:
        setup = dict(self.setup)
        setup["reward"] = Reward(**setup["reward"])
        setup["agents"] = tuple(setup["agents"])
        return Router(
            Setup(**setup),
            [tuple(a) for a in self.actions],
            LinUCB.from_dict(self.model),
            features_from_dict(self.features),
        )


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    """The state's file lock; held by another process for over a minute: a clear error."""
    lock = FileLock(str(path) + ".lock", timeout=60)
    try:
        lock.acquire()
    except Timeout as exc:
        raise RouterStateError(
            f"the router state {path.name} has been locked by another process for over a "
            f"minute ({path}.lock); wait for it to finish, or remove the lock file if none runs"
        ) from exc
    try:
        yield
    finally:
        lock.release()


def _read(path: Path) -> RouterState:
    if not path.is_file():
        raise RouterStateError(
            f"no router state at {path}; train one with `ragteam router train ... --out {path}`"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != STATE_VERSION:
            raise RouterStateError(
                f"{path} has state version {data.get('version')}, this ragteam reads "
                f"{STATE_VERSION}; retrain with `ragteam router train`"
            )
        state = RouterState(**data)
        state.router()  # a state of the wrong shape fails here, not in the middle of an answer
        return state
    except (
        json.JSONDecodeError,
        UnicodeDecodeError,
        TypeError,
        AttributeError,
        KeyError,
        ValueError,
        IndexError,
    ) as exc:
        backup = path.with_name(path.name + ".bak")
        hint = (
            f"the last good state is kept at {backup}: copy it over {path}"
            if backup.is_file()
            else "retrain with `ragteam router train`"
        )
        raise RouterStateError(f"the router state {path} is corrupt ({exc}); {hint}") from exc


def _write(path: Path, state: RouterState) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file():
        with contextlib.suppress(RouterStateError):
            _read(path)  # only a readable state becomes the backup
            atomic.copy_file(path, path.with_name(path.name + ".bak"))
    atomic.write_json(path, asdict(state), indent=None)


def load_state(path: str | Path) -> RouterState:
    path = Path(path)
    with _lock(path):
        return _read(path)


def save_state(path: str | Path, state: RouterState) -> None:
    path = Path(path)
    with _lock(path):
        _write(path, state)


def pending_log(path: str | Path) -> Path:
    """Answers waiting for feedback: an append-only JSON-lines log beside the state, so that
    an adaptive answer appends one line instead of rewriting the router's matrices."""
    path = Path(path)
    return path.with_name(path.name + ".pending.jsonl")


def append_pending(path: str | Path, entry: dict[str, Any]) -> None:
    """Append one line to the pending log (under the state's lock, fsynced)."""
    log = pending_log(path)
    with _lock(Path(path)), log.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def read_pending(path: str | Path) -> dict[str, dict[str, Any]]:
    """Entries still waiting (a `done` line consumes its id); a cut last line is ignored."""
    log = pending_log(path)
    waiting: dict[str, dict[str, Any]] = {}
    if not log.is_file():
        return waiting
    for line in log.read_bytes().decode("utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue  # a cut or damaged line: skipped, the rest still counts
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            continue
        if entry.get("done"):
            waiting.pop(entry["id"], None)
        else:
            waiting[entry["id"]] = entry
    return waiting


def rewrite_pending(path: str | Path, waiting: dict[str, dict[str, Any]]) -> None:
    """Compact the log to the waiting entries (atomically; the caller holds the lock)."""
    atomic.write_jsonl(pending_log(path), waiting.values())


@contextlib.contextmanager
def updating(path: str | Path, then: Callable[[], None] | None = None) -> Iterator[RouterState]:
    """Read, change and write the state while holding its lock (safe for concurrent writers);
    `then` runs after the new state is written, still under the lock (e.g. marking a pending
    entry done only once the update it made is on disk)."""
    path = Path(path)
    with _lock(path):
        state = _read(path)
        yield state
        _write(path, state)
        if then is not None:
            then()
