"""`ragteam serve --watch`: each served folder index is synced once at start (a full rescan)
and again whenever its folder changes (debounced); requests keep answering from the loaded
generation until the new one is swapped in. The outcome of each sync shows in `/healthz`."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any, Protocol

from ragteam.errors import RagteamError
from ragteam.retrieval.index import read_manifest


class Service(Protocol):
    """What watching needs of the service (which starts it: no import back up)."""

    config: Any
    closing: threading.Event

    def sync(self, name: str) -> dict[str, Any]: ...


log = logging.getLogger("ragteam.server")
DEBOUNCE_MS = 1000


def folder_of(directory: Path) -> Path | None:
    """The folder a served index was synced from, or None (a JSONL index, or unreadable)."""
    try:
        source = read_manifest(directory).source
    except RagteamError:
        return None
    if not source.is_folder or not Path(source.path).is_dir():
        return None
    return Path(source.path)


def start_watching(service: Service) -> dict[str, dict[str, Any]]:
    """One daemon thread per served folder index; returns the live status table."""
    status: dict[str, dict[str, Any]] = {}
    for name, directory in service.config.indexes.items():
        folder = folder_of(directory)
        if folder is None:
            continue
        status[name] = {"watching": True, "last_sync": None}
        thread = threading.Thread(
            target=_watch,
            args=(service, name, folder, status[name]),
            daemon=True,
            name=f"watch-{name}",
        )
        thread.start()
    return status


def _watch(service: Service, name: str, folder: Path, status: dict[str, Any]) -> None:
    from watchfiles import watch

    _sync(service, name, status)
    for _changes in watch(
        folder, stop_event=service.closing, debounce=DEBOUNCE_MS, raise_interrupt=False
    ):
        _sync(service, name, status)


def _sync(service: Service, name: str, status: dict[str, Any]) -> None:
    at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    try:
        report = service.sync(name)
        status["last_sync"] = {
            "at": at,
            "ok": True,
            **{k: report[k] for k in ("converted", "embedded", "rewritten", "passages")},
        }
    except RagteamError as exc:
        log.warning("sync of index %s failed: %s", name, exc)
        status["last_sync"] = {"at": at, "ok": False, "detail": str(exc)}
