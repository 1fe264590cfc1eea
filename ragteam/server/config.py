"""What a server serves: named indexes and runs, one model, limits, and its key."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

from ragteam.errors import InputError
from ragteam.llm import DEFAULT_MODEL, ModelOptions

NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


@dataclass
class ServerConfig:
    indexes: dict[str, Path] = field(default_factory=dict)  # name -> index directory
    runs_dir: Path | None = None  # eval runs served by their folder name
    model: str = DEFAULT_MODEL
    model_options: ModelOptions = field(default_factory=ModelOptions)
    router_state: Path | None = None  # the adaptive router's state (feedback)
    api_key: str | None = None
    host: str = "127.0.0.1"
    max_question_chars: int = 4000
    max_body_bytes: int = 64 * 1024
    max_upload_mb: int = 100  # a document added over the API (PUT .../documents/NAME)
    concurrency: int = 1  # answers at once (`serve`'s default: the cores, at most 8)
    queue_size: int = 8  # answers waiting for a slot before a 503 with Retry-After
    queue_timeout: float = 120.0  # seconds an answer may wait for a slot
    cors_origins: list[str] = field(default_factory=list)
    watch: bool = False  # sync each served folder index when its folder changes

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
