"""A model loaded on its first use: what a strategy that may need no model at all (`read`) is
handed, so that answering without generation never pays for loading one."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ragteam.llm.base import ChatModel, Completion, Request, TextSink


class Deferred:
    """Stands for the model `load()` returns; loads it (once) when first asked anything."""

    def __init__(self, load: Callable[[], ChatModel]) -> None:
        self._load, self._model = load, None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def model(self) -> ChatModel:
        with self._lock:
            if self._model is None:
                self._model = self._load()
            return self._model

    def complete(self, request: Request, on_text: TextSink | None = None) -> Completion:
        return self.model().complete(request, on_text)

    def count_tokens(self, text: str) -> int:
        return self.model().count_tokens(text)

    def __getattr__(self, name: str) -> Any:  # identity, parallel, context_length, streams...
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.model(), name)


class TakingTurns:
    """A model that serves one call at a time (`parallel` False), shared by answers that run
    at once: its calls take turns, while the rest of each answer (search, the span reader)
    goes on beside them. A server with `--concurrency` above 1 hands every answer this."""

    def __init__(self, model: ChatModel) -> None:
        self._model = model
        self._lock = threading.Lock()

    def complete(self, request: Request, on_text: TextSink | None = None) -> Completion:
        with self._lock:
            return self._model.complete(request, on_text)

    def count_tokens(self, text: str) -> int:
        with self._lock:
            return self._model.count_tokens(text)

    def __getattr__(self, name: str) -> Any:  # identity, parallel, context_length, streams...
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._model, name)
