"""The router's state file: versioned JSON, written atomically, read-modify-write under a file
lock, the previous good version kept as `.bak`."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock

from ragteam.errors import RagteamError
from ragteam.router.features import features_from_dict
from ragteam.router.linucb import LinUCB
from ragteam.router.rewards import Reward
from ragteam.router.simulate import Router, Setup

STATE_VERSION = 1


class RouterStateError(RagteamError):
    """A router state file is missing, corrupt or from another version."""


@dataclass
class RouterState:
    setup: dict[str, Any]
    actions: list[list[str]]
    features: dict[str, Any]
    model: dict[str, Any]
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    updates: int = 0
    version: int = STATE_VERSION

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


def _lock(path: Path) -> FileLock:
    return FileLock(str(path) + ".lock", timeout=60)


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
        return RouterState(**data)
    except (json.JSONDecodeError, UnicodeDecodeError, TypeError, AttributeError) as exc:
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
            shutil.copy2(path, path.with_name(path.name + ".bak"))
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        json.dump(asdict(state), handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def load_state(path: str | Path) -> RouterState:
    path = Path(path)
    with _lock(path):
        return _read(path)


def save_state(path: str | Path, state: RouterState) -> None:
    path = Path(path)
    with _lock(path):
        _write(path, state)


@contextlib.contextmanager
def updating(path: str | Path) -> Iterator[RouterState]:
    """Read, change and write the state while holding its lock (safe for concurrent writers)."""
    path = Path(path)
    with _lock(path):
        state = _read(path)
        yield state
        _write(path, state)
