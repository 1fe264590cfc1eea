"""The server's front door, in front of every route (pure ASGI): a request that carries a body
is authenticated first and its body is read by this guard, at most `max_body` bytes whatever
its framing (Content-Length or chunked), then handed on; a larger body is refused with 413
after reading no more than that, an unauthenticated one with 401 before reading any of it."""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]
BODY_METHODS = ("POST", "PUT", "PATCH")


class BodyGuard:
    """`every_request`: the key is asked of every request, not only those with a body (MCP
    over HTTP, whose event stream is a GET). `streamed(method, path)`: a request whose body
    the route itself reads and bounds as it arrives (a document upload): its key is checked,
    its body passed on unread."""

    def __init__(
        self,
        app: App,
        max_body: int,
        api_key: Callable[[], str | None],
        every_request: bool = False,
        streamed: Callable[[str, str], bool] = lambda _method, _path: False,
    ) -> None:
        self.app = app
        self.max_body = max_body
        self.api_key = api_key
        self.every_request = every_request
        self.streamed = streamed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (
            scope["method"] not in BODY_METHODS and not self.every_request
        ):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        key = self.api_key()
        given = headers.get("authorization", "")
        if key and not hmac.compare_digest(given.encode(), f"Bearer {key}".encode()):
            await _refuse(
                send,
                401,
                "unauthorized",
                "a valid API key is required: Authorization: Bearer KEY",
                "unauthorized",
            )
            return
        if scope["method"] not in BODY_METHODS or self.streamed(scope["method"], scope["path"]):
            await self.app(scope, receive, send)
            return
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            await self._too_large(send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body.extend(message.get("body", b""))
            if len(body) > self.max_body:
                await self._too_large(send)
                return
            if not message.get("more_body", False):
                break
        await self.app(scope, _replay(bytes(body), receive), send)

    async def _too_large(self, send: Send) -> None:
        await _refuse(
            send,
            413,
            "body too large",
            f"the request body is over {self.max_body // 1024} KiB",
            "body_too_large",
        )


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body once, then the client's own messages (a disconnect, for streams)."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


async def _refuse(send: Send, status: int, error: str, detail: str, code: str) -> None:
    payload = json.dumps({"error": error, "detail": detail, "code": code}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
