"""ragteam: answer knowledge-intensive questions with teams of LLM agents over your documents.

The package is lazy: `import ragteam.common.metrics` (or any submodule) loads only what that module
needs; `ragteam.answer`, `ragteam.evaluate` and the other names below are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ragteam._version import __version__

_LAZY = {
    "answer": "ragteam.asking.api",
    "AskRequest": "ragteam.asking",
    "Conversation": "ragteam.asking.conversation",
    "evaluate": "ragteam.eval.evaluate",
    "Tool": "ragteam.tools",
    "tool": "ragteam.tools",
    "Answer": "ragteam.types",
    "Citation": "ragteam.types",
    "Passage": "ragteam.types",
    **{
        name: "ragteam.errors"
        for name in (
            "IndexUnusable",
            "InputError",
            "ModelError",
            "ParseError",
            "RagteamError",
            "ServerUnreachable",
            "UnknownName",
        )
    },
}

if TYPE_CHECKING:
    from ragteam.asking import AskRequest
    from ragteam.asking.api import answer
    from ragteam.asking.conversation import Conversation
    from ragteam.errors import (
        IndexUnusable,
        InputError,
        ModelError,
        ParseError,
        RagteamError,
        ServerUnreachable,
        UnknownName,
    )
    from ragteam.eval.evaluate import evaluate
    from ragteam.tools import Tool, tool
    from ragteam.types import Answer, Citation, Passage


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ragteam' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "AskRequest",
    "Answer",
    "Citation",
    "Conversation",
    "IndexUnusable",
    "InputError",
    "ModelError",
    "ParseError",
    "Passage",
    "RagteamError",
    "ServerUnreachable",
    "Tool",
    "UnknownName",
    "__version__",
    "answer",
    "evaluate",
    "tool",
]
