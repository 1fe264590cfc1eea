"""The agent teams as an OpenAI-compatible chat API: `GET /v1/models` lists one model per
strategy and served index (`smart@wiki`; with one index the bare strategy name works too), and
`POST /v1/chat/completions` answers the last user message, the earlier turns given to the
strategy as the conversation so far. Streamed answers send standard `chat.completion.chunk`
events; the agent steps ride along in a `ragteam` extension field that standard clients ignore.
Citations are appended to the text and given structured in `ragteam.citations`; `usage` sums
the team's tokens. Strategy options, choices and claims go in the request's `ragteam` field.
Same auth, body limit, queue and option allow-list as the rest of the server; errors come in
OpenAI's shape `{"error": {"message", "type", "param", "code"}}`.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import ValidationError

from ragteam.errors import IndexBusy, IndexUnusable, InputError, RagteamError, UnknownName
from ragteam.server.asking import Asked
from ragteam.server.chat_reply import SOURCES, Reply, Written, cut_reply
from ragteam.server.chat_request import (
    ChatError,
    ChatRequest,
    check_request,
    conversation_of,
    reply_limit,
)
from ragteam.server.limits import Busy, Closing
from ragteam.server.redact import redact_paths
from ragteam.server.service import Cancelled, Service
from ragteam.server.streaming import admitted_events, answer_watched
from ragteam.types import Answer

log = logging.getLogger("ragteam.server")


def model_ids(service: Service) -> list[str]:
    """One model per strategy that can answer here (and served index): `adaptive` only with a
    trained router."""
    from ragteam.server.views import strategy_info
    from ragteam.strategies import available

    names = [n for n in available() if not strategy_info(service, n)["unavailable"]]
    indexes = list(service.config.indexes)
    ids = [f"{s}@{i}" for i in indexes for s in names]
    return (names + ids) if len(indexes) <= 1 else ids


def _built_at(service: Service, started: int) -> dict[str | None, int]:
    """Each served index's build time (when its models became what they are); `None` (the
    bare names of a lone index) maps to the only index, else to when the server started."""
    built: dict[str | None, int] = {}
    for name in service.config.indexes:
        try:
            stamp = service.manifest(name).built_at
            built[name] = int(datetime.fromisoformat(str(stamp)).timestamp()) if stamp else started
        except (RagteamError, ValueError):
            built[name] = started
    built[None] = next(iter(built.values()), started)
    return built


def resolve_model(service: Service, model: str) -> tuple[str, str | None]:
    """(strategy, index name) of a model id."""
    if model not in model_ids(service):
        raise ChatError(
            404,
            f"the model '{model}' does not exist; models: {', '.join(model_ids(service))}",
            "invalid_request_error",
            "model_not_found",
            "model",
        )
    strategy, _, index = model.partition("@")
    if not index and service.config.indexes:
        index = next(iter(service.config.indexes))
    return strategy, index or None


def answer_text(answer: Answer) -> str:
    """The answer with its inline `[n]` markers, what its grounding means in words (a chat
    interface shows no extension field), then the sources it cites."""
    grounded = answer.grounding()
    if (closest := answer.closest()) is not None:  # not an answer: where to look
        if closest.span.kind in ("yes", "no"):  # a yes or no it is not sure of, as what it is
            text = (
                f"Not sure: {closest.span.kind}. The deciding sentence: "
                f'"{closest.sentence}" ({closest.locator})'
            )
        else:
            text = (
                f'Closest passage found (not a sure answer): "{closest.sentence}" '
                f"({closest.locator})"
            )
        return _with_sources(text, answer)
    text = answer.marked_text()
    if answer.why:
        text += f"\n\nWhy: {answer.why}"
    if answer.evidence:
        found = answer.evidence[0]
        text += f'\n\nFound in: "{found.sentence}" ({found.locator})'
    if grounded.level != "supported":
        # the message itself where the level's general note does not hold: the reader found
        # the words but is unsure, or every sentence is backed and the reader would not say it
        own = grounded.found_at or (
            grounded.level == "partly_supported" and not grounded.unsupported
        )
        said = grounded.message if own else _WARNING.get(grounded.level)
        text += f"\n\n({said or grounded.message})"
    return _with_sources(text, answer)


def _with_sources(text: str, answer: Answer) -> str:
    if not answer.citations:
        return text
    sources = "\n".join(
        f"[{n}] {c.locator or c.title} ({c.passage_id})"
        for n, c in enumerate(answer.citations, start=1)
    )
    return f"{text}{SOURCES}{sources}"


_WARNING = {
    "partly_supported": "Partly supported: the sentences without a [n] are not backed by your "
    "documents.",
    "not_supported": "Not supported: none of the passages read says this. Check it before you "
    "rely on it.",
    "no_evidence": "No evidence: nothing was found in your documents; this is the model's own "
    "knowledge.",
    "unchecked": "Not checked against your documents.",
    "failed": "Every step failed: this is not an answer.",
}


def _usage(answer: Answer) -> dict[str, int]:
    totals = answer.trace.totals() if answer.trace else {}
    # what was read counts: the models' prompts and the span reader's windows
    prompt = totals.get("prompt_tokens", 0) + totals.get("read_tokens", 0)
    completion = totals.get("completion_tokens", 0)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _extension(answer: Answer, reply: Reply, cut: bool) -> dict[str, Any]:
    return {
        "notes": reply.notes(answer, cut),
        "citations": [c.to_dict() for c in answer.citations],
        "read": [c.to_dict() for c in answer.read],
        "support": answer.support.to_dict() if answer.support else None,
        "evidence": [e.to_dict() for e in answer.evidence],
        "closest": closest.to_dict() if (closest := answer.closest()) else None,
        "why": answer.why,
        "strategy": answer.strategy,
        "grounding": answer.grounding().to_dict(),
        "conversation": {
            "question": reply.talk.question,
            "follows": reply.talk.follows,
            "earlier_turns": reply.talk.earlier_turns,
        },
        "cost": answer.trace.totals() if answer.trace else {},
    }


_STATUS = [
    (Closing, 503, "api_error", "shutting_down"),
    (Busy, 503, "api_error", "busy"),
    (UnknownName, 404, "invalid_request_error", "not_found"),
    (InputError, 400, "invalid_request_error", "bad_request"),
    # as /v1/answer: the served index or the router's state is there but unusable
    (IndexBusy, 409, "api_error", "index_busy"),
    (IndexUnusable, 409, "api_error", "index_unusable"),
    (RagteamError, 502, "api_error", "upstream_error"),
]


def _as_chat_error(exc: Exception, service: Service | None = None) -> ChatError:
    if isinstance(exc, ChatError):
        return exc
    for kind, status, type_, code in _STATUS:
        if isinstance(exc, kind):
            config = service.config if service else None
            error = ChatError(status, redact_paths(str(exc), config), type_, code)
            error.retry_after = exc.retry_after if isinstance(exc, Busy) else None
            return error
    log.error("unexpected error in a chat completion", exc_info=exc)  # the operator's to see
    return ChatError(500, f"internal error ({type(exc).__name__})", "api_error", "internal")


def add_chat_routes(app: FastAPI, service: Service, auth: list[Any]) -> None:
    started = int(time.time())

    @app.get("/v1/models", dependencies=auth)
    def models() -> dict[str, Any]:
        built = _built_at(service, started)  # each manifest read once per listing
        return {
            "object": "list",
            "data": [
                {"id": m, "object": "model", "created": built[m.partition("@")[2] or None]}
                | {"owned_by": "ragteam"}
                for m in model_ids(service)
            ],
        }

    @app.post("/v1/chat/completions", dependencies=auth)
    async def chat(request: Request) -> Response:
        try:
            try:
                body = ChatRequest.model_validate(json.loads(await request.body() or b"null"))
            except (ValidationError, ValueError, RecursionError) as exc:  # not JSON, not UTF-8
                reason = str(exc) if not isinstance(exc, RecursionError) else "nested too deeply"
                if isinstance(exc, ValidationError) and _index_in_extension(exc):
                    reason += (
                        "\nname the index in the model instead: STRATEGY@INDEX (GET /v1/models)"
                    )
                raise ChatError(
                    400, f"invalid request: {reason}", "invalid_request_error", "invalid_request"
                ) from exc
            check_request(body)
            strategy, index = resolve_model(service, body.model)
            talk = conversation_of(body.messages, service.config.max_question_chars)
            reply = Reply(talk, reply_limit(body), (body.model_extra or {}).get("temperature"))
            ext = body.ragteam
            asked = Asked(
                **ext.model_dump(),
                question=talk.question,
                index=index,
                strategy=strategy,
                instructions=talk.instructions,
                temperature=float(reply.temperature or 0.0),
            )
            service.check(asked)
            if body.stream:  # a full queue is refused here; a queued stream says so
                held = service.gate.try_acquire()
                return StreamingResponse(
                    _chunks(service, asked, body.model, reply, held),
                    media_type="text/event-stream",
                )
            if not await service.gate.acquire_unless(request.is_disconnected):
                return Response(status_code=499)
        except Exception as exc:  # every refusal in OpenAI's error shape
            return _as_chat_error(exc, service).response()
        return await _complete(service, asked, body.model, reply, request)


async def _complete(
    service: Service, asked: Asked, model: str, reply: Reply, request: Request
) -> Response:
    """The whole reply at once; the work stops at its next step or token when the client
    leaves (as on every answering route)."""
    try:
        answer = await answer_watched(service, asked, request)
    except Cancelled:
        return Response(status_code=499)
    except Exception as exc:  # the answer failed: said in OpenAI's shape
        return _as_chat_error(exc, service).response()
    content, cut = cut_reply(answer_text(answer), reply.limit)
    return JSONResponse(
        {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "length" if cut else "stop",
                }
            ],
            "usage": _usage(answer),
            "ragteam": {
                **_extension(answer, reply, cut),
                "trace": answer.trace.to_dict() if answer.trace else None,
            },
        }
    )


async def _chunks(
    service: Service, asked: Asked, model: str, reply: Reply, held: bool
) -> AsyncIterator[bytes]:
    """The answer's text as it is written (`delta.content`), then what checking it added
    (inline citations, a warning, the sources); the team's working rides in `ragteam`."""
    ident, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        data = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }
        return f"data: {json.dumps(data, ensure_ascii=False, default=str)}\n\n".encode()

    yield chunk({"role": "assistant", "content": ""})
    written = Written(hold=asked.abstain, limit=reply.limit)
    async for event, data in admitted_events(service, asked, held):
        if event in ("queued", "started", "step"):
            yield chunk({}, ragteam={event: data})
        elif event == "writing":
            delta = written.add(data.get("answer"))
            yield chunk({"content": delta} if delta else {}, ragteam={"writing": data})
        elif event == "answer":
            rest = written.finish(answer_text(data))
            yield chunk({"content": rest}, ragteam=_extension(data, reply, written.cut))
            yield chunk({}, "length" if written.cut else "stop", usage=_usage(data))
        elif event == "error":
            error = _as_chat_error(data, service)
            payload = {"message": str(error), "type": error.kind, "code": error.code}
            yield f"data: {json.dumps({'error': payload})}\n\n".encode()
    yield b"data: [DONE]\n\n"


def _index_in_extension(exc: ValidationError) -> bool:
    """Whether a chat body put `index` in its `ragteam` extension (the model names it)."""
    return any(
        e["type"] == "extra_forbidden" and e["loc"] == ("ragteam", "index") for e in exc.errors()
    )
