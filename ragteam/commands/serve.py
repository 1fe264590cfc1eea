"""`ragteam serve`."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ragteam.commands.common import err, friendly_errors
from ragteam.commands.model_options import ModelOpt, with_model_options
from ragteam.errors import InputError
from ragteam.llm import DEFAULT_MODEL, ModelOptions

if TYPE_CHECKING:
    from ragteam.server.config import ServerConfig

ConcurrencyOpt = Annotated[
    int,
    typer.Option(
        min=1,
        max=256,
        help="answers at once (default: the cores, at most 8), sharing the cores as they run; "
        "a model that serves one call at a time (the embedded one) takes its calls in turn, "
        "while searching and reading run at once",
    ),
]
# as many answers at once as cores: a lone one still gets every core (`server.cores`)
CONCURRENCY = max(1, min(8, os.cpu_count() or 1))


@with_model_options
def serve_command(
    model_options: ModelOptions,
    index: Annotated[list[str], typer.Option("--index", help="DIR or NAME=DIR, repeatable")] = [],  # noqa: B006 - typer reads the default
    runs: Annotated[Path | None, typer.Option(help="folder of eval runs to show")] = None,
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535)] = 8000,
    model: ModelOpt = DEFAULT_MODEL,
    concurrency: ConcurrencyOpt = CONCURRENCY,
    queue: Annotated[int, typer.Option(min=0, max=10_000, help="answers that may wait")] = 8,
    queue_timeout: Annotated[
        float,
        typer.Option(
            min=0.1,
            max=3600,
            help="seconds an answer may wait for a slot before it is refused (503, Retry-After)",
        ),
    ] = 120.0,
    workers: Annotated[
        int,
        typer.Option(
            min=1,
            max=64,
            help="processes answering on the one port, each loading the reader, the indexes "
            "and any model itself (--concurrency and --queue are each one's)",
        ),
    ] = 1,
    client_key_env: Annotated[
        str,
        typer.Option(
            help="environment variable holding the key clients must send to this server "
            "(Authorization: Bearer KEY); the model server's key is --api-key-env"
        ),
    ] = "RAGTEAM_API_KEY",
    router_state: Annotated[Path | None, typer.Option(help="adaptive router state")] = None,
    cors: Annotated[list[str], typer.Option(help="allowed CORS origin, repeatable")] = [],  # noqa: B006
    watch: Annotated[
        bool, typer.Option(help="sync folder indexes as their folders change")
    ] = False,
    max_upload_mb: Annotated[
        int, typer.Option(min=1, max=10_000, help="the largest document a client may add")
    ] = 100,
) -> None:
    """Serve the HTTP API and the web page (needs the `server` extra)."""
    with friendly_errors():
        config = _config(
            index,
            client_key_env,
            runs_dir=runs,
            model=model,
            model_options=model_options,
            router_state=router_state,
            host=host,
            concurrency=concurrency,
            queue_size=queue,
            queue_timeout=queue_timeout,
            cors_origins=cors,
            watch=watch,
            max_upload_mb=max_upload_mb,
        )
        _serve(config, port, workers)


def _serve(config: ServerConfig, port: int, workers: int) -> None:
    """Serve `config` in this process, or in `workers` of them (`server.workers`)."""
    try:
        import uvicorn  # noqa: F401 - checked here, used by run_server

        from ragteam.server.app import create_app
        from ragteam.server.warm import start_warming
        from ragteam.server.workers import check_workers, serve_workers
    except ImportError as exc:
        raise InputError("serving needs the server extra: pip install 'ragteam[server]'") from exc
    check_workers(config, workers)
    key = "API key required" if config.api_key else "no API key"
    where = f"http://{config.host}:{port}/"
    if workers > 1:
        err.print(f"ragteam serving on {where} ({workers} workers, {key}; API docs at /docs)")
        serve_workers(config, workers, port)
        return
    app = create_app(config)
    err.print(f"ragteam serving on {where} ({key}; API docs at /docs)")
    service = app.state.service  # the indexes and the reader load before the first question
    run_server(app, config.host, port, service.gate.close, lambda: start_warming(service))


def _config(index: list[str], key_env: str | None, **settings: Any) -> ServerConfig:
    """The service's settings from a command's flags: the `--index` values parsed, the key
    clients must send read from the environment variable `key_env` (none without one)."""
    from ragteam.server.config import ServerConfig, parse_indexes

    api_key = (os.environ.get(key_env) or None) if key_env else None
    return ServerConfig(indexes=parse_indexes(index), api_key=api_key, **settings)


def run_server(
    app: object,
    host: str,
    port: int,
    on_exit: Callable[[], None],
    on_started: Callable[[], object] | None = None,
) -> None:
    """uvicorn, as `serve` runs it: at SIGTERM `on_exit` refuses the answers still waiting
    for a slot (a JSON 503 at once, `Gate.close`); those running get 10 s to finish, then
    stop at their next step (`Service.close`); a second signal stops at once. `on_started`
    runs once the port answers (/healthz first, then the warming)."""
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            on_exit()
            super().handle_exit(sig, frame)

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if on_started is not None:
                on_started()

    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=10
    )
    Server(config).run()


@with_model_options
def mcp_command(
    model_options: ModelOptions,
    index: Annotated[list[str], typer.Option("--index", help="DIR or NAME=DIR, repeatable")] = [],  # noqa: B006
    model: ModelOpt = DEFAULT_MODEL,
    http: Annotated[bool, typer.Option(help="streamable HTTP on 127.0.0.1 instead of stdio")] = (
        False
    ),
    port: Annotated[int, typer.Option(min=1, max=65535, help="port for --http")] = 8001,
    queue: Annotated[int, typer.Option(min=0, max=10_000, help="answers that may wait")] = 8,
    router_state: Annotated[Path | None, typer.Option(help="adaptive router state")] = None,
    client_key_env: Annotated[
        str,
        typer.Option(help="with --http: environment variable holding the key clients send"),
    ] = "RAGTEAM_API_KEY",
    session_idle: Annotated[
        float, typer.Option(min=1, help="with --http: seconds before an idle session ends")
    ] = 600.0,
) -> None:
    """Serve the agent teams to MCP clients: tools ask, search, passage; indexes as resources
    (needs the `mcp` extra)."""
    with friendly_errors():
        try:
            from ragteam.server.mcp_app import build_mcp, mcp_http_app
        except ImportError as exc:
            raise InputError(
                "the MCP server needs the mcp extra: pip install 'ragteam[mcp]'"
            ) from exc
        from ragteam.server.service import Service

        key_env = client_key_env if http else None  # stdio has no clients to tell apart
        config = _config(
            index,
            key_env,
            model=model,
            model_options=model_options,
            router_state=router_state,
            queue_size=queue,
        )
        # plain one-line logs on stderr, warnings and worse (the SDK would add a Rich handler
        # that draws a box for every refused tool call)
        import logging

        logging.basicConfig(level=logging.WARNING, format="ragteam mcp: %(message)s")
        service = Service(config)
        if http:
            app = mcp_http_app(service, idle_s=session_idle)
            key = "API key required" if config.api_key else "no API key"
            err.print(f"ragteam MCP server on http://127.0.0.1:{port}/mcp ({key})")
    if http:
        run_server(app, "127.0.0.1", port, service.gate.close)
    else:
        build_mcp(service).run("stdio")
