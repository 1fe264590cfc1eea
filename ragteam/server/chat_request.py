"""What a chat request may ask, read once: the OpenAI body (with ragteam's extension field),
the checks that refuse what a reply cannot honour (never ignored silently), the question made
of the conversation, and OpenAI's error shape."""

from __future__ import annotations

from typing import Any, Literal

from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from ragteam.support.layers import layer_names
from ragteam.types import DEFAULT_SUPPORT_LAYER

# a reply is an answer of at most 160 tokens (MA-RAG's summary), a warning and up to 8 sources:
# a client's max_tokens at least this large is honoured by every reply
MIN_REPLY_TOKENS = 512


# every layer `--support` takes, named in the schemas (a plugin layer installed later is listed
# from the next start; the request is checked against the registry either way)
SupportName = Literal[tuple(layer_names())]  # type: ignore[valid-type]


class Extension(BaseModel):
    options: dict[str, Any] = Field(default_factory=dict)
    choices: dict[str, str] | None = None
    claim: bool = False
    support: SupportName = DEFAULT_SUPPORT_LAYER
    # the reply says in words when nothing supports the answer; abstain withholds such an
    # answer instead (its streamed text then waits for the check)
    abstain: bool = False


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")  # user, ...: accepted; `check_request` the rest
    model: str
    messages: list[dict[str, Any]] = Field(min_length=1)
    stream: bool = False
    n: int = 1
    tools: list[Any] | None = None
    functions: list[Any] | None = None
    ragteam: Extension = Field(default_factory=Extension)


class ChatError(Exception):
    def __init__(self, status: int, message: str, kind: str, code: str, param: str | None = None):
        super().__init__(message)
        self.status, self.kind, self.code, self.param = status, kind, code, param
        self.retry_after: int | None = None  # seconds, for a 429

    def response(self) -> JSONResponse:
        body = {"message": str(self), "type": self.kind, "param": self.param, "code": self.code}
        headers = {"Retry-After": str(self.retry_after)} if self.retry_after else None
        return JSONResponse({"error": body}, status_code=self.status, headers=headers)


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text":
                raise ChatError(
                    400,
                    "only text content is supported (no images, audio or files)",
                    "invalid_request_error",
                    "unsupported_content",
                    "messages",
                )
            parts.append(str(part.get("text", "")))
        return "\n".join(parts)
    return ""


def question_of(messages: list[dict[str, Any]], limit: int) -> tuple[str, int, int]:
    """The text the strategy answers: the last user message after as much of the earlier
    conversation as fits `limit` characters (oldest turns dropped first); with the number of
    earlier turns kept and dropped."""
    turns = [m for m in messages if m.get("role") in ("user", "assistant")]
    if not turns or turns[-1].get("role") != "user" or not _text(turns[-1]).strip():
        raise ChatError(
            400,
            "the conversation must end with a user message that asks something",
            "invalid_request_error",
            "no_user_message",
            "messages",
        )
    last = _text(turns[-1]).strip()
    kept: list[str] = []
    room = limit - len(last) - 64
    for turn in reversed(turns[:-1]):
        line = f"{'User' if turn['role'] == 'user' else 'Assistant'}: {_text(turn).strip()}"
        if len(line) + 1 > room:
            break
        kept.insert(0, line)
        room -= len(line) + 1
    dropped = len(turns) - 1 - len(kept)
    if not kept:
        return last, 0, dropped
    history = "\n".join(kept)
    return f"The conversation so far:\n{history}\n\nNow answer: {last}", len(kept), dropped


def check_request(body: ChatRequest) -> None:
    if body.n != 1:
        raise ChatError(
            400,
            "n must be 1: one answer per request",
            "invalid_request_error",
            "unsupported_n",
            "n",
        )
    _check_settings(body)
    if body.tools or body.functions:
        raise ChatError(
            400,
            "tools and functions are not supported: the agent team chooses its own tools",
            "invalid_request_error",
            "unsupported_tools",
            "tools",
        )


def _check_settings(body: ChatRequest) -> None:
    """What a chat request may ask of the reply's writing: nothing is ignored silently."""
    extra = body.model_extra or {}
    if any(m.get("role") in ("system", "developer") for m in body.messages):
        raise ChatError(
            400,
            "system messages are not used: each agent role of the team has its own "
            "instructions; ask in a user message (or remove the system prompt in your client)",
            "invalid_request_error",
            "unsupported_system_message",
            "messages",
        )
    if extra.get("temperature") not in (None, 0, 0.0):
        raise ChatError(
            400,
            "temperature must be 0 or left out: the team answers deterministically, so the same "
            "question gives the same answer (and is served from the cache)",
            "invalid_request_error",
            "unsupported_temperature",
            "temperature",
        )
    for name in ("max_tokens", "max_completion_tokens"):
        limit = extra.get(name)
        if limit is not None and (not isinstance(limit, int) or limit < MIN_REPLY_TOKENS):
            raise ChatError(
                400,
                f"{name} must be at least {MIN_REPLY_TOKENS} or left out: a reply (the answer, "
                "its warning and its sources) is never longer, and it is not cut",
                "invalid_request_error",
                "unsupported_max_tokens",
                name,
            )
