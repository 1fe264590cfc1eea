"""The model protocol every backend implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ragteam.trace import TextSink

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": "..."}


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    cached: bool = False


@runtime_checkable
class ChatModel(Protocol):
    """A chat model. `identity` names backend + model for cache keys and run records;
    `parallel` says whether concurrent calls are served concurrently;
    `context_length` is the window in tokens.

    `on_text`, when given, is called with the reply so far and its token count as the reply
    is written (at least once per token, in order); backends that cannot stream do not set
    `streams = True` and are not given one (the caller reports their whole reply at the end).
    An exception it raises stops the call."""

    identity: str
    parallel: bool
    context_length: int

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: list[str] | None = None,
        json_schema: dict[str, Any] | None = None,
        on_text: TextSink | None = None,
    ) -> Completion: ...

    def count_tokens(self, text: str) -> int: ...


def estimate_tokens(text: str) -> int:
    """A conservative token estimate (about 3 characters per token) for backends without a
    tokenizer at hand."""
    return len(text) // 3 + 1


def streams(model: Any) -> bool:
    """Whether `model` reports its reply as it is written (`on_text`)."""
    return bool(getattr(model, "streams", False))
