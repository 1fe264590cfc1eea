"""A scripted model for unit tests of parsing and control flow (never a quality test)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable
from typing import Any

from ragteam.errors import ModelError
from ragteam.llm.base import Completion, Message, Request, TextRequest, estimate_tokens
from ragteam.trace import TextSink

Reply = str | dict[str, Any] | list[Any]
ReplyFn = Callable[[list[Message], dict[str, Any]], Reply]


class FakeModel:
    """Replies from a queue (in order) or from a function of (messages, params).

    Dicts and lists are sent as JSON text. Every call is kept in `calls` for assertions.
    """

    parallel = False
    streams = True  # a scripted reply is "written" one word at a time

    def __init__(
        self,
        replies: Iterable[Reply] | ReplyFn,
        *,
        identity: str = "fake",
        context_length: int = 2048,
    ) -> None:
        self._fn: ReplyFn | None = replies if callable(replies) else None
        self._queue: list[Reply] = [] if callable(replies) else list(replies)
        self.identity = identity
        self.context_length = context_length
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def complete(self, request: Request, on_text: TextSink | None = None) -> Completion:
        messages, params = list(request.messages), request.params()
        with self._lock:
            self.calls.append({"messages": messages, **params})
            if self._fn is None and not self._queue:
                raise ModelError("FakeModel ran out of scripted replies; script one more.")
            queued = self._queue.pop(0) if self._fn is None else None
        reply = self._fn(messages, params) if self._fn is not None else queued
        text = reply if isinstance(reply, str) else json.dumps(reply)
        if on_text is not None:
            for n, word in enumerate(re.finditer(r"\s*\S+", text), start=1):
                on_text(text[: word.end()], n)
        prompt = sum(self.count_tokens(m["content"]) for m in messages)
        return Completion(text, prompt, self.count_tokens(text), 0.0)

    def complete_text(self, request: TextRequest, on_text: TextSink | None = None) -> Completion:
        """Raw-text continuation from the same script; the call is kept with role `raw` (and
        its `logit_bias` and `grammar`, which a script cannot apply). Like a server, the reply
        is cut before the first stop string."""
        raw: list[Message] = [{"role": "raw", "content": request.prompt}]
        chat = Request(raw, request.max_tokens, request.temperature, request.stop)
        result = self.complete(chat, on_text)
        if request.logit_bias:
            self.calls[-1]["logit_bias"] = request.logit_bias
        if request.grammar is not None:
            self.calls[-1]["grammar"] = request.grammar
        text = result.text
        for marker in request.stop:
            text = text.split(marker, 1)[0]
        return Completion(text, result.prompt_tokens, self.count_tokens(text), 0.0)

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)
