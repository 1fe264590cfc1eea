"""What a chat request may ask, read once: the OpenAI body (with ragteam's extension field),
the checks that refuse what a reply cannot honour (never ignored silently), the question made
of the conversation, and OpenAI's error shape."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from ragteam.asking.conversation import Conversation
from ragteam.server.asking import AskOptions


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")  # user, ...: accepted; `check_request` the rest
    model: str
    messages: list[dict[str, Any]] = Field(min_length=1)
    stream: bool = False
    n: int = 1
    tools: list[Any] | None = None
    functions: list[Any] | None = None
    ragteam: AskOptions = Field(default_factory=AskOptions)  # ragteam's extension


class ChatError(Exception):
    def __init__(self, status: int, message: str, kind: str, code: str, param: str | None = None):
        super().__init__(message)
        self.status, self.kind, self.code, self.param = status, kind, code, param
        self.retry_after: int | None = None  # seconds, for a 503 (busy or shutting down)

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


@dataclass(frozen=True)
class ChatAsked:
    """What a chat request asks, read once. `question` is what the team answers and searches
    for: the last user message, made to stand alone (`ragteam.followup`);
    `instructions`: the system and developer messages."""

    question: str
    asked: str
    follows: str = ""
    instructions: str = ""
    earlier_turns: int = 0


def conversation_of(messages: list[dict[str, Any]], limit: int) -> ChatAsked:
    turns = [m for m in messages if m.get("role") in ("user", "assistant")]
    if not turns or turns[-1].get("role") != "user" or not _text(turns[-1]).strip():
        raise ChatError(
            400,
            "the conversation must end with a user message that asks something",
            "invalid_request_error",
            "no_user_message",
            "messages",
        )
    asked = " ".join(_text(turns[-1]).split())
    instructions = "\n".join(
        _text(m).strip() for m in messages if m.get("role") in ("system", "developer")
    ).strip()
    earlier = [(m["role"], _text(m)) for m in turns[:-1]]
    question, follows = Conversation.of_messages(earlier, limit).meant(asked)
    return ChatAsked(question, asked, follows, instructions, len(turns) - 1)


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
    """What a chat request may ask of the reply's writing, checked for its type: a system
    message, `temperature` and `max_tokens` are accepted (what is done with each is said in the
    reply's trace); nothing is ignored silently."""
    extra = body.model_extra or {}
    temperature = extra.get("temperature")
    if temperature is not None and (
        isinstance(temperature, bool)
        or not isinstance(temperature, int | float)
        or not 0 <= temperature <= 2
    ):
        raise ChatError(
            400,
            "temperature must be a number from 0 to 2",
            "invalid_request_error",
            "invalid_temperature",
            "temperature",
        )
    for name in ("max_tokens", "max_completion_tokens"):
        limit = extra.get(name)
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, int) or limit < 1
        ):
            raise ChatError(
                400,
                f"{name} must be a whole number of at least 1",
                "invalid_request_error",
                "invalid_max_tokens",
                name,
            )


def reply_limit(body: ChatRequest) -> int | None:
    """The reply's length limit in tokens, as the client asked (None: no limit)."""
    extra = body.model_extra or {}
    asked = [extra.get(n) for n in ("max_tokens", "max_completion_tokens")]
    return min((a for a in asked if a is not None), default=None)
