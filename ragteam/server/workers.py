"""More than one process answering (`serve --workers N`).

uvicorn's supervisor starts N worker processes on one listening socket; each builds the app
from the same `ServerConfig` (handed over in the environment, `CONFIG_ENV`, which only this
user's processes may read: no file for a killed parent to leave behind), loads the reader and
the indexes itself and answers the connections the kernel gives it. What they share is on
disk: an index's files (the vectors mapped, the passages read from their file on demand), and
a sync or an upload in one worker takes the index's writer lock, swaps in a new generation,
and every worker answers from it at its next request (`Service.index` loads again when the
manifest changed). Each worker's torch passes get the cores divided among every answer that
may run at once (workers x concurrency).

What a worker cannot share is refused up front (`check_workers`): a folder watch (each worker
would watch and sync) and the adaptive router's state (each would write its own copy)."""

from __future__ import annotations

import base64
import os
import pickle
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragteam.errors import InputError, RagteamError
from ragteam.server.config import ServerConfig
from ragteam.server.cores import process_share

CONFIG_ENV = "RAGTEAM_SERVE_CONFIG"


@dataclass(frozen=True)
class Handover:
    """What each worker is started with."""

    config: ServerConfig
    workers: int
    threads: int  # torch threads in each worker, until its answers share them


def check_workers(config: ServerConfig, workers: int) -> None:
    if workers <= 1:
        return
    if config.watch:
        raise InputError(
            "--watch syncs from the serving process, and each of --workers would watch: serve "
            "one worker with --watch, or sync from outside (`ragteam index sync`): every "
            "worker answers from the new generation at its next request"
        )
    if config.router_state is not None:
        raise InputError(
            "--router-state is written by the process that learns from feedback, and each of "
            "--workers would keep its own: serve the adaptive router with one worker"
        )


def serve_workers(config: ServerConfig, workers: int, port: int) -> None:
    """Serve with `workers` processes on `config.host`:`port` until a signal stops them."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    from ragteam.server.service import Service
    from ragteam.server.uploads import clean_served

    check_workers(config, workers)
    clean_served(Service(config))  # once, here: a worker started later must not clean another's
    handover = Handover(config, workers, process_share(workers))
    # uvicorn spawns the workers (and restarts one that dies): they inherit the environment
    os.environ[CONFIG_ENV] = base64.b64encode(pickle.dumps(handover)).decode("ascii")
    settings = uvicorn.Config(
        "ragteam.server.workers:worker_app",
        factory=True,
        host=config.host,
        port=port,
        workers=workers,
        log_level="warning",
        timeout_graceful_shutdown=10,
    )
    try:
        Multiprocess(settings, sockets=[settings.bind_socket()]).run()
    finally:
        os.environ.pop(CONFIG_ENV, None)


def worker_app() -> Any:  # noqa: ANN401 - a FastAPI app, built in a worker
    """uvicorn's factory in each worker: the app from the handed-over config."""
    # taken out of this worker's environment: a process it starts (a conversion child) does not
    # inherit the config and the API key in it
    given = os.environ.pop(CONFIG_ENV, None)
    if not given:
        raise RagteamError(f"{CONFIG_ENV} is not set: start workers with `ragteam serve --workers`")
    # written by our own parent into the environment it started this process with
    handover: Handover = pickle.loads(base64.b64decode(given))  # noqa: S301
    import torch

    from ragteam.server.app import create_app
    from ragteam.server.warm import start_warming

    torch.set_num_threads(handover.threads)
    app = create_app(handover.config, clean=False, workers=handover.workers)
    start_warming(app.state.service)
    # uvicorn's signal handlers are in place when it calls this factory: at a stop signal the
    # answers still waiting for a slot are refused at once (a JSON 503), as in one process
    # (`commands.serve.run_server`), then uvicorn stops as it would
    for sig in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(sig)
        if callable(previous):
            signal.signal(sig, _closing_first(app.state.service.gate.close, previous))
    return app


def _closing_first(close: Callable[[], None], previous: Callable[..., Any]) -> Callable[..., Any]:
    def handler(sig: int, frame: Any) -> Any:  # noqa: ANN401
        close()
        return previous(sig, frame)

    return handler
