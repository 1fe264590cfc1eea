"""What every answer needs, loaded when the server starts rather than at the first question:
each served index (its files verified, its passages' line starts found) and the shipped span
reader (every answer's support check reads with it). Loaded in the background, the indexes and
the reader at once; /healthz says how far it got (`warm`)."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from ragteam.errors import RagteamError

if TYPE_CHECKING:
    from ragteam.server.service import Service


def start_warming(service: Service) -> threading.Thread:
    """Warm `service` in a daemon thread; its progress is `service.warm_state`."""
    thread = threading.Thread(target=warm, args=(service,), name="warm", daemon=True)
    thread.start()
    return thread


def warm(service: Service) -> None:
    began = time.perf_counter()
    service.warm_state = {"state": "loading"}
    jobs: dict[str, Callable[[], Any]] = {
        name: functools.partial(service.index, name) for name in service.config.indexes
    }
    jobs["the span reader"] = _reader
    failed: list[str] = []
    with ThreadPoolExecutor(max_workers=len(jobs), thread_name_prefix="warm") as pool:
        running = {name: pool.submit(job) for name, job in jobs.items()}
        for name, future in running.items():
            try:
                future.result()
            except RagteamError as exc:  # the first question over it says the same
                failed.append(f"{name}: {exc}")
    seconds = round(time.perf_counter() - began, 2)
    state = "ready" if not failed else "ready, but not everything loaded"
    service.warm_state = {"state": state, "seconds": seconds}
    if failed:  # a `detail`: /healthz shows it only to who has the key (it may name files)
        service.warm_state["detail"] = failed


def _reader() -> None:
    from ragteam.reader.read import load_reader

    load_reader()
