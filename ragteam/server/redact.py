"""Messages for HTTP clients: no server file paths, and the hints written for the command line
said in the API's terms (a web user cannot pass `--index`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ragteam.server.config import ServerConfig

_PATH = re.compile(r"(?<![\w:/.])/(?:[\w.@+-]+/)*[\w.@+-]+")


# command-line hints -> what they mean to a client of the API
_FOR_CLIENTS = (
    (re.compile(r"pass an index \(--index DIR\)"), 'name a served index in the request ("index")'),
    (
        re.compile(r"(train (?:it|one) with|retrain with|run) `ragteam router train[^`]*`"),
        "the server's operator must train the router (ragteam router train) and serve its state",
    ),
    (re.compile(r"--opt (\w+)\.(\w+)="), r"option \1.\2="),
    (re.compile(r', e\.g\. ragteam ask "[^"]*"'), ""),
    (
        re.compile(r"Start the server \(e\.g\. `[^`]*`\) or fix --base-url\."),
        "The model server is down: the operator of this server must start it.",
    ),
)


def redact_paths(text: str, config: ServerConfig | None) -> str:
    """The server's own file paths out of a message: a served index by its name, any other
    absolute path as <server path>; command-line hints in the API's terms."""
    for pattern, replacement in _FOR_CLIENTS:
        text = pattern.sub(replacement, text)
    if config is not None:
        for name, directory in config.indexes.items():
            for form in {str(directory), str(Path(directory).resolve())}:
                # the whole path, by component: `DIR-corrupt` is not index DIR, and the files
                # inside an index are not the client's business either
                inside = re.escape(form.rstrip("/")) + r"(?:/[\w.@+-]+)*(?![\w.@+-])"
                text = re.sub(inside, f"index '{name}'", text)
    return _PATH.sub("<server path>", text)


def redact_all(value: Any, config: ServerConfig | None) -> Any:
    """Every string inside `value` (dicts, lists) with the server's paths taken out."""
    if isinstance(value, str):
        return redact_paths(value, config)
    if isinstance(value, dict):
        return {k: redact_all(v, config) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_all(v, config) for v in value]
    return value
