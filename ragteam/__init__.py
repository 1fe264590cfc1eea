"""ragteam: answer knowledge-intensive questions with teams of LLM agents over your documents."""

from __future__ import annotations

from ragteam._version import __version__
from ragteam.api import answer
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

__all__ = [
    "Answer",
    "Citation",
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
