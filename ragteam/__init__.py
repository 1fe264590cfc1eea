"""ragteam: answer knowledge-intensive questions with teams of LLM agents over your documents."""

from __future__ import annotations

__version__ = "0.1.0"

from ragteam.api import answer  # noqa: E402
from ragteam.errors import (  # noqa: E402
    IndexUnusable,
    InputError,
    ModelError,
    ParseError,
    RagteamError,
    ServerUnreachable,
    UnknownName,
)
from ragteam.types import Answer, Citation, Passage  # noqa: E402

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
    "UnknownName",
    "__version__",
    "answer",
]
