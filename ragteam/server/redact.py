"""Messages for HTTP clients carry no server file paths."""

from __future__ import annotations

import re
from pathlib import Path

from ragteam.server.config import ServerConfig

_PATH = re.compile(r"(?<![\w:/.])/(?:[\w.@+-]+/)*[\w.@+-]+")


def redact_paths(text: str, config: ServerConfig | None) -> str:
    """The server's own file paths out of a message: a served index by its name, any other
    absolute path as <server path>."""
    if config is not None:
        for name, directory in config.indexes.items():
            for form in {str(directory), str(Path(directory).resolve())}:
                text = text.replace(form, f"index '{name}'")
    return _PATH.sub("<server path>", text)
