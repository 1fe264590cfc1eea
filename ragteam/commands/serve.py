"""`ragteam serve`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Annotated, Any

import typer

from ragteam.commands.common import err, friendly_errors
from ragteam.commands.flags import with_settings
from ragteam.errors import InputError
from ragteam.server.config import ServerConfig

PortOpt = Annotated[int, typer.Option(min=1, max=65535)]


@with_settings("config", ServerConfig)
def serve_command(
    config: ServerConfig,
    port: PortOpt = 8000,
    workers: Annotated[
        int,
        typer.Option(
            min=1,
            max=64,
            help="processes answering on the one port, each loading the reader, the indexes "
            "and any model itself (--concurrency and --queue are each one's)",
        ),
    ] = 1,
) -> None:
    """Serve the HTTP API and the web page (needs the `server` extra)."""
    with friendly_errors():
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


@with_settings("config", ServerConfig, only=lambda f: f.metadata.get("mcp", True))
def mcp_command(
    config: ServerConfig,
    http: Annotated[bool, typer.Option(help="streamable HTTP on 127.0.0.1 instead of stdio")] = (
        False
    ),
    port: Annotated[int, typer.Option(min=1, max=65535, help="port for --http")] = 8001,
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

        if not http:  # stdio has no clients to tell apart
            config = replace(config, api_key=None)
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
