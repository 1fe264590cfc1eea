"""What every `ragteam` sub-command shares: consoles, error handling, option parsing."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

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
