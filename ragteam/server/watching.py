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
from ragteam.server.redact import redact_paths


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


RETRY_S = 5.0  # after the watch itself fails (the folder moved away): look again this often


def _watch(service: Service, name: str, folder: Path, status: dict[str, Any]) -> None:
    """Sync at start and on every change until the server closes; no exception ends it (a
    failure is logged, shown in `/healthz` without server paths, and watching goes on)."""
    from watchfiles import watch

    _sync(service, name, status)
    while not service.closing.is_set():
        try:
            for _changes in watch(
                folder, stop_event=service.closing, debounce=DEBOUNCE_MS, raise_interrupt=False
            ):
                _sync(service, name, status)
            return  # the server is closing
        except Exception as exc:  # noqa: BLE001 - the watch must outlive any failure
            log.warning("watching the folder of index %s failed: %s", name, exc)
            _failed(service, status, f"watching the folder failed ({exc}); trying again")
            service.closing.wait(RETRY_S)
            _sync(service, name, status)


def _sync(service: Service, name: str, status: dict[str, Any]) -> None:
    at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    try:
        report = service.sync(name)
        status["last_sync"] = {
            "at": at,
            "ok": True,
            **{k: report[k] for k in ("converted", "embedded", "rewritten", "segment", "passages")},
        }
    except RagteamError as exc:
        log.warning("sync of index %s failed: %s", name, exc)
        _failed(service, status, str(exc))
    except Exception as exc:  # noqa: BLE001 - an OSError, a bug: said, and watching goes on
        log.exception("sync of index %s failed unexpectedly", name)
        _failed(service, status, f"the sync failed unexpectedly ({type(exc).__name__}: {exc})")


def _failed(service: Service, status: dict[str, Any], detail: str) -> None:
    """A failure as `/healthz` shows it: no path of the server's (it needs no key)."""
    at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    status["last_sync"] = {"at": at, "ok": False, "detail": redact_paths(detail, service.config)}
