"""What every `ragteam` sub-command shares: consoles, error handling, option parsing."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Annotated, Any

import typer
from rich.console import Console

from ragteam.errors import InputError, RagteamError

out = Console()
err = Console(stderr=True)


@contextlib.contextmanager
def friendly_errors() -> Iterator[None]:
    try:
        yield
    except RagteamError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        raise typer.Exit(2) from exc


def parse_options(pairs: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--opt expects KEY=VALUE, got '{pair}'")
        try:
            options[key.replace("-", "_")] = json.loads(value)
        except json.JSONDecodeError:
            options[key.replace("-", "_")] = value
    return options


ToolsOpt = Annotated[
    list[str],
    typer.Option("--tools", help="a tool as module:function (typed, documented), repeatable"),
]
McpOpt = Annotated[
    list[str],
    typer.Option("--mcp", help='an MCP server over stdio, e.g. --mcp "python server.py"'),
]


@contextlib.contextmanager
def user_tools(specs: list[str], servers: list[str], timeout: float = 30.0) -> Iterator[tuple]:
    """The tools named by --tools and those of the --mcp servers (stopped on exit)."""
    from ragteam.tools import import_tool, plugin_tools
    from ragteam.tools.mcp import MCPServer

    with contextlib.ExitStack() as stack:
        found = [*plugin_tools(), *(import_tool(spec) for spec in specs)]
        for command in servers:
            found += stack.enter_context(MCPServer(command, timeout=timeout)).tools
        yield tuple(found)
