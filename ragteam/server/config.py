"""What a server serves: named indexes and runs, one model, limits, and its key."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragteam.errors import InputError
from ragteam.llm import DEFAULT_MODEL, MODEL_SPECS, ModelOptions
from ragteam.settings import flag, group

NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


# as many answers at once as cores: a lone one still gets every core (`server.cores`)
CONCURRENCY = max(1, min(8, os.cpu_count() or 1))
KEY_ENV = "RAGTEAM_API_KEY"


def _served(default: Any, help: str, *, mcp: bool = True, **kw: Any) -> Any:  # noqa: A002
    """A field of the server's settings that is a flag of `serve` (and of `mcp` unless
    `mcp=False`): declared here once, for both commands."""
    return flag(default, help, meta={"mcp": mcp}, **kw)


def _key(variable: str) -> str | None:
    """The key clients must send: the value of the environment variable named (none if the
    variable is unset or empty)."""
    return (os.environ.get(variable) or None) if variable else None


@dataclass
class ServerConfig:
    """What a server serves, declared once: each flagged field is a flag of `ragteam serve`
    (and of `ragteam mcp`, unless marked serve-only)."""

    indexes: dict[str, Path] = _served(  # name -> index directory
        None,
        "DIR or NAME=DIR, repeatable",
        factory=dict,
        name="--index",
        many=True,
        parse=lambda values: parse_indexes(list(values)),
    )
    runs_dir: Path | None = _served(  # eval runs served by their folder name
        None, "folder of eval runs to show", mcp=False, name="--runs"
    )
    model: str = _served(DEFAULT_MODEL, MODEL_SPECS)
    model_options: ModelOptions = group(ModelOptions)
    router_state: Path | None = _served(None, "adaptive router state (its feedback)")
    api_key: str | None = _served(
        None,
        "environment variable holding the key clients must send (Authorization: Bearer KEY; "
        "`mcp` over --http); the model server's key is --api-key-env",
        name="--client-key-env",
        cli_default=KEY_ENV,
        kind=str,
        parse=_key,
    )
    host: str = _served("127.0.0.1", "address to listen on", mcp=False)
    max_question_chars: int = 4000
    max_body_bytes: int = 64 * 1024
    max_upload_mb: int = _served(  # a document added over the API (PUT .../documents/NAME)
        100, "the largest document (MB) a client may add", mcp=False, min=1, max=10_000
    )
    concurrency: int = _served(  # answers at once
        1,
        "answers at once (default: the cores, at most 8), sharing the cores as they run; a "
        "model that serves one call at a time (the embedded one) takes its calls in turn, "
        "while searching and reading run at once",
        mcp=False,
        min=1,
        max=256,
        cli_default=CONCURRENCY,
    )
    queue_size: int = _served(  # answers waiting for a slot before a 503 with Retry-After
        8, "answers that may wait", name="--queue", min=0, max=10_000
    )
    queue_timeout: float = _served(  # seconds an answer may wait for a slot
        120.0,
        "seconds an answer may wait for a slot before it is refused (503, Retry-After)",
        mcp=False,
        min=0.1,
        max=3600,
    )
    cors_origins: list[str] = _served(
        None, "allowed CORS origin, repeatable", mcp=False, factory=list, name="--cors",
        many=True, parse=list,
    )  # fmt: skip
    watch: bool = _served(  # sync each served folder index when its folder changes
        False, "sync folder indexes as their folders change", mcp=False
    )

    def check(self) -> None:
        for name in self.indexes:
            if not name or set(name) - NAME_CHARS:
                raise InputError(f"index name {name!r}: use letters, digits, '-', '_', '.'")
        if not is_loopback(self.host) and not self.api_key:
            raise InputError(
                f"--host {self.host} is reachable from other machines: set an API key "
                "(--client-key-env NAME, the variable holding it) or serve on 127.0.0.1"
            )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_indexes(values: list[str]) -> dict[str, Path]:
    """`--index DIR` (named after the folder) or `--index NAME=DIR`, repeatable."""
    found: dict[str, Path] = {}
    for value in values:
        name, sep, path = value.partition("=")
        directory = Path(path if sep else value)
        key = name if sep else directory.resolve().name
        if key in found:
            raise InputError(f"two indexes are named {key!r}; use --index NAME=DIR")
        found[key] = directory
    return found
