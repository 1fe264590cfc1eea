"""The HTTP API and the web page: `create_app(config)` (FastAPI; OpenAPI at /docs)."""

from __future__ import annotations

import errno
import hmac
import json
import logging
import secrets
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from ragteam._version import __version__
from ragteam.errors import (
    IndexBusy,
    IndexUnusable,
    InputError,
    ModelError,
    RagteamError,
    ServerUnreachable,
    StorageError,
    UnknownName,
)
from ragteam.llm.base import ChatModel
from ragteam.router.state import RouterStateError
from ragteam.server.asking import Asked
from ragteam.server.config import ServerConfig
from ragteam.server.cores import process_share
from ragteam.server.docs import add_docs_routes
from ragteam.server.guard import BodyGuard
from ragteam.server.limits import Busy, Closing
from ragteam.server.openai_chat import add_chat_routes
from ragteam.server.pages import PageNotRendered, add_page_routes
from ragteam.server.redact import redact_all, redact_paths
from ragteam.server.service import Cancelled, Service
from ragteam.server.streaming import admitted_events, answer_watched
from ragteam.server.uploads import (
    LastDocument,
    NameTaken,
    TooLarge,
    add_document_routes,
    clean_served,
    is_upload,
)
from ragteam.server.views import add_read_routes

log = logging.getLogger("ragteam.server")
STATIC = resources.files("ragteam.server").joinpath("static")


class FeedbackRequest(BaseModel):
    feedback_id: str = Field(min_length=1, max_length=200)
    correct: bool | None = None
    answer: str | None = Field(default=None, max_length=2000)


def create_app(
    config: ServerConfig, model: ChatModel | None = None, *, clean: bool = True, workers: int = 1
) -> FastAPI:
    """The app; `model` replaces the configured one (tests pass a scripted model). One of
    `workers` processes (`server.workers`) leaves the uploads' leftovers to its parent."""
    service = Service(config, model, cores=process_share(workers))
    if clean:
        clean_served(service)  # what uploads cut by a kill left behind
    app = FastAPI(title="ragteam", version=__version__, docs_url=None, redoc_url=None)
    app.state.service = service
    if config.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=config.cors_origins, allow_methods=["*"])
    _add_limits(app, config)
    _add_errors(app)
    auth = [Depends(_authorize)]
    worker = secrets.token_hex(4)  # tells one worker from another, and says nothing of the host

    @app.get("/healthz")
    def healthz(request: Request) -> dict[str, Any]:
        """Open to all; a failed sync's or load's detail (which may name files) only with the
        key, and never a server path."""
        indexes = redact_all(service.generations(), config)
        warm = redact_all(service.warm_state, config)
        if config.api_key and not hmac.compare_digest(
            request.headers.get("authorization", "").encode(), f"Bearer {config.api_key}".encode()
        ):
            indexes, warm = _without_details(indexes), _withheld(warm)
        return {
            "status": "ok",
            "version": __version__,
            "waiting": service.gate.waiting,
            "concurrency": config.concurrency,  # the page runs this many columns together
            "workers": workers,  # processes answering (`serve --workers`), each as above
            "worker": worker,  # the one that answered this (a name, not its process id)
            "max_question_chars": config.max_question_chars,
            "question_tokens": service.question_tokens(),
            "indexes": indexes,  # loaded generations: a sync shows here
            "warm": warm,  # what was loaded before the first question
        }

    _add_answer_routes(app, service, auth)
    add_read_routes(app, service, auth)
    add_document_routes(app, service, auth)
    add_page_routes(app, service, auth)
    add_chat_routes(app, service, auth)
    add_docs_routes(app)
    _add_page_routes(app)
    app.router.on_shutdown.append(service.close)
    return app


def _without_details(indexes: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The indexes' states with every failure's detail withheld (it may name the folder's
    files): an index that cannot be used, its last sync, its watch's last sync."""
    return {name: _withheld(state) for name, state in indexes.items()}


def _withheld(state: dict[str, Any]) -> dict[str, Any]:
    """`state` with each `detail` in it, at any depth, withheld."""
    return {
        key: "withheld: ask /healthz with the server's key"
        if key == "detail" and value
        else _withheld(value)
        if isinstance(value, dict)
        else value
        for key, value in state.items()
    }


def _add_answer_routes(app: FastAPI, service: Service, auth: list[Any]) -> None:
    """Answers (once, or streamed as server-sent events) and feedback for the router."""
    config = service.config

    @app.post("/v1/answer", dependencies=auth)
    async def answer_once(asked: Asked, request: Request) -> dict[str, Any]:
        service.check(asked)
        if not await service.gate.acquire_unless(request.is_disconnected):
            return Response(status_code=499)  # left while queued: its place went to the next
        try:
            return (await answer_watched(service, asked, request)).to_dict()
        except Cancelled:  # the client left: no one reads a reply
            return Response(status_code=499)

    @app.post("/v1/answer/stream", dependencies=auth)
    async def answer_stream(asked: Asked) -> Response:
        service.check(asked)
        held = service.gate.try_acquire()  # a full queue is refused here, with its status
        return StreamingResponse(_stream(service, asked, held), media_type="text/event-stream")

    @app.post("/v1/feedback", dependencies=auth)
    def feedback(body: FeedbackRequest) -> dict[str, Any]:
        from ragteam.router.online import give_feedback
        from ragteam.router.state import default_state_path

        if (body.correct is None) == (body.answer is None):
            raise InputError("give exactly one of correct (true/false) or answer (the right one)")
        reward = give_feedback(
            config.router_state or default_state_path(),
            body.feedback_id,
            correct=body.correct,
            gold=body.answer,
        )
        return {"feedback_id": body.feedback_id, "reward": reward}


def _add_page_routes(app: FastAPI) -> None:
    """The web page and its two static files."""

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(str(STATIC.joinpath("index.html")))

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> Response:
        allowed = {"app.js": "text/javascript", "style.css": "text/css"}
        if name not in allowed:
            raise UnknownName("static file", name, list(allowed))
        text = STATIC.joinpath(name).read_text("utf-8")
        return Response(text, media_type=allowed[name])


def _sse(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n".encode()


async def _stream(service: Service, asked: Asked, held: bool) -> AsyncIterator[bytes]:
    """`queued` while it waits for a slot, one SSE event per trace step as it happens and per
    reply as it is written, then the answer (or an error)."""
    async for event, data in admitted_events(service, asked, held):
        if event == "answer":
            data = {k: v for k, v in data.to_dict().items() if k != "trace"}
        elif event == "error":
            data = _error_body(data, service.config)[1]
        yield _sse(event, data)


class Unauthorized(RagteamError):
    """A request without the server's API key."""


async def _authorize(request: Request) -> None:
    key = request.app.state.service.config.api_key
    if not key:
        return
    given = request.headers.get("authorization", "")
    if not hmac.compare_digest(given.encode(), f"Bearer {key}".encode()):
        raise Unauthorized("a valid API key is required: Authorization: Bearer KEY")


def _add_limits(app: FastAPI, config: ServerConfig) -> None:
    """Authentication, then a bounded body, before any route reads a byte (see guard.py)."""
    app.add_middleware(
        BodyGuard,
        max_body=config.max_body_bytes,
        api_key=lambda: config.api_key,
        streamed=is_upload,
    )


_STATUS: list[tuple[type[BaseException], int, str]] = [
    (Unauthorized, 401, "unauthorized"),
    (Closing, 503, "shutting down"),
    (Busy, 503, "busy"),  # the server is overloaded, not the client over a quota (429)
    (UnknownName, 404, "not found"),
    (IndexBusy, 409, "index busy"),
    (TooLarge, 413, "body too large"),
    (PageNotRendered, 413, "page not rendered"),
    (NameTaken, 409, "file exists"),
    (LastDocument, 409, "last document"),
    (InputError, 400, "bad request"),
    (IndexUnusable, 409, "index unusable"),
    (RouterStateError, 409, "router unavailable"),
    (StorageError, 507, "insufficient storage"),
    (ServerUnreachable, 502, "model server unreachable"),
    (ModelError, 502, "model error"),
    (RagteamError, 500, "error"),
]


def _error_body(
    exc: BaseException, config: ServerConfig | None = None
) -> tuple[int, dict[str, str]]:
    """Status and JSON body: a title, a machine-readable code, and a detail with no server
    file paths in it."""
    for kind, status, title in _STATUS:
        if isinstance(exc, kind):
            detail = redact_paths(str(exc), config)
            return status, {"error": title, "code": title.replace(" ", "_"), "detail": detail}
    if isinstance(exc, OSError) and (said := _os_error(exc)) is not None:
        status, title, detail = said
        log.warning("%s: %s", title, exc)
        return status, {"error": title, "code": title.replace(" ", "_"), "detail": detail}
    log.exception("unexpected error", exc_info=exc)
    return 500, {"error": "internal error", "code": "internal_error", "detail": type(exc).__name__}


_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_DENIED = {errno.EACCES, errno.EPERM, errno.EROFS}


def _os_error(exc: OSError) -> tuple[int, str, str] | None:
    """A file system's refusal as what the client can do about it (no server path in it)."""
    reason = exc.strerror or type(exc).__name__
    if exc.errno in _FULL:
        return (
            507,
            "insufficient storage",
            (
                f"the server's disk is full ({reason}): nothing was saved; free space on the "
                "server and try again"
            ),
        )
    if exc.errno in _DENIED:
        return (
            403,
            "forbidden",
            (
                f"the server may not write there ({reason}): nothing was changed; its folders "
                "must be writable by the user that runs it"
            ),
        )
    return None


def _add_errors(app: FastAPI) -> None:
    async def handle(request: Request, exc: Exception) -> JSONResponse:
        status, body = _error_body(exc, request.app.state.service.config)
        headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, Busy) else None
        return JSONResponse(body, status_code=status, headers=headers)

    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'][1:]) or 'body'}: {e['msg']}" for e in exc.errors()
        )
        return JSONResponse({"error": "bad request", "detail": problems}, status_code=422)

    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        body = {"error": "not found" if exc.status_code == 404 else "error", "detail": exc.detail}
        return JSONResponse(body, status_code=exc.status_code)

    app.add_exception_handler(RequestValidationError, invalid)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, http_error)  # type: ignore[arg-type]
    for kind in (Busy, RagteamError, OSError, Exception):
        app.add_exception_handler(kind, handle)
