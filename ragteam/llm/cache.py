"""A content-addressed SQLite cache of deterministic (temperature 0) model calls."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragteam.common.atomic import storage
from ragteam.common.paths import llm_cache_file
from ragteam.errors import ModelError
from ragteam.llm.base import (
    ChatModel,
    Completion,
    Message,
    Request,
    TextModel,
    TextRequest,
    streams,
)
from ragteam.trace import TextSink


def default_cache_path() -> Path:
    return llm_cache_file()


def cache_key(identity: str, messages: list[Message], params: dict[str, Any]) -> str:
    blob = json.dumps(
        {"model": identity, "messages": messages, "params": params},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CachedModel:
    """Wraps a model; serves repeated temperature-0 calls from SQLite.

    Only deterministic calls are cached: a call at temperature > 0 always reaches the model.
    """

    def __init__(self, inner: ChatModel, path: Path | None = None) -> None:
        self.inner = inner
        self.identity = inner.identity
        self.parallel = inner.parallel
        self.context_length = inner.context_length
        self.streams = streams(inner)
        self.path = path or default_cache_path()
        self._lock = threading.Lock()
        self._where = f"the model-call cache {self.path}"
        with storage(self._where):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            with self._lock, self._db:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute(
                    "CREATE TABLE IF NOT EXISTS completions (key TEXT PRIMARY KEY, text TEXT, "
                    "prompt_tokens INTEGER, completion_tokens INTEGER, seconds REAL, "
                    "created REAL)"
                )

    def complete(self, request: Request, on_text: TextSink | None = None) -> Completion:
        if request.temperature > 0:
            return self.inner.complete(request, on_text)
        key = cache_key(self.identity, list(request.messages), request.params())
        return self._cached(key, lambda: self.inner.complete(request, on_text))

    def _cached(self, key: str, call: Callable[[], Completion]) -> Completion:
        started = time.perf_counter()
        with self._lock:
            row = self._db.execute(
                "SELECT text, prompt_tokens, completion_tokens FROM completions WHERE key = ?",
                (key,),
            ).fetchone()
        if row is not None:
            return Completion(row[0], row[1], row[2], time.perf_counter() - started, cached=True)
        result = call()
        with storage(self._where), self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO completions VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key,
                    result.text,
                    result.prompt_tokens,
                    result.completion_tokens,
                    result.seconds,
                    time.time(),
                ),
            )
        return result

    def complete_text(self, request: TextRequest, on_text: TextSink | None = None) -> Completion:
        """Raw-text continuation, cached like chat calls (keyed apart from them; a logit bias
        and a grammar are part of the key)."""
        inner = self.inner
        if not isinstance(inner, TextModel):
            raise ModelError(
                f"model {self.identity} cannot continue raw text; use an in-process GGUF "
                "(--model PATH.gguf) for this"
            )
        if request.temperature > 0:
            return inner.complete_text(request, on_text)
        raw: list[Message] = [{"role": "raw-text", "content": request.prompt}]
        key = cache_key(self.identity, raw, request.params())
        return self._cached(key, lambda: inner.complete_text(request, on_text))

    def tokenize(self, text: str) -> list[int]:
        tokenize = getattr(self.inner, "tokenize", None)
        if tokenize is None:
            raise ModelError(f"model {self.identity} does not expose its tokenizer")
        return list(tokenize(text))

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def close(self) -> None:
        with self._lock:
            self._db.close()
