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


@dataclass(frozen=True)
class Request:
    """One chat call's arguments, said once: the cache, the call wrappers and every backend
    take this object. `stop` ends a plain reply; `json_schema` constrains the reply to JSON;
    `logit_bias` adds to the logits of the token ids it names (ids of the model it was made
    for: `agents.answer_labels`)."""

    messages: tuple[Message, ...]
    max_tokens: int = 256
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    json_schema: dict[str, Any] | None = None
    logit_bias: dict[int, float] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", tuple(self.messages))
        object.__setattr__(self, "stop", tuple(self.stop))

    def params(self) -> dict[str, Any]:
        """The generation settings as a plain dict (the cache key's and a script's view; a
        bias only when given, so a plain call's key is the one it had before biases)."""
        params: dict[str, Any] = {
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "stop": list(self.stop) or None,
            "json_schema": self.json_schema,
        }
        if self.logit_bias:
            params["logit_bias"] = self.logit_bias
        return params


@dataclass(frozen=True)
class TextRequest:
    """One raw-text continuation's arguments (`TextModel.complete_text`): `logit_bias` adds to
    the logits of the token ids it names at every position; `grammar` (GBNF) constrains what
    may be written."""

    prompt: str
    max_tokens: int = 256
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    logit_bias: dict[int, float] | None = None
    grammar: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "stop", tuple(self.stop))

    def params(self) -> dict[str, Any]:
        """The settings as a plain dict; a bias or grammar only when given (so the cache key
        of a plain continuation is the one it had before they existed)."""
        params: dict[str, Any] = {
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "stop": list(self.stop) or None,
        }
        if self.logit_bias:
            params["logit_bias"] = self.logit_bias
        if self.grammar is not None:
            params["grammar"] = self.grammar
        return params


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

    def complete(self, request: Request, on_text: TextSink | None = None) -> Completion: ...

    def count_tokens(self, text: str) -> int: ...


@runtime_checkable
class TextModel(ChatModel, Protocol):
    """A chat model that can also continue raw text (in-process GGUFs, `/completions`
    servers): SMART's trained agent writes its trajectory this way."""

    def complete_text(
        self, request: TextRequest, on_text: TextSink | None = None
    ) -> Completion: ...


def estimate_tokens(text: str) -> int:
    """A conservative token estimate (about 3 characters per token) for backends without a
    tokenizer at hand."""
    return len(text) // 3 + 1


def streams(model: Any) -> bool:
    """Whether `model` reports its reply as it is written (`on_text`)."""
    return bool(getattr(model, "streams", False))
