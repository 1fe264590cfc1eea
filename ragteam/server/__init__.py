"""`ragteam serve`: an HTTP API with streamed traces and a web page (extra `server`)."""

from __future__ import annotations

from ragteam.server.config import ServerConfig

__all__ = ["ServerConfig", "create_app"]


def create_app(*args, **kwargs):  # noqa: ANN002, ANN003, ANN201 - FastAPI is imported lazily
    from ragteam.server.app import create_app as create

    return create(*args, **kwargs)
