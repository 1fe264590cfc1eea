"""Tools of an MCP server started over stdio (the official `mcp` SDK, extra `mcp`).

The SDK is asynchronous; one background thread runs its event loop and holds the session, and
each tool call is sent to it with a timeout. Tools are name-spaced `SERVER.TOOL`. `close()`
ends the session and stops the server process.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import re
import shlex
import tempfile
import threading
from typing import Any

from ragteam.errors import InputError, RagteamError
from ragteam.tools.base import NAME, Tool, ToolOutput

log = logging.getLogger("ragteam.tools")
# The SDK logs a server's malformed lines with tracebacks; ragteam reports MCP failures itself.
logging.getLogger("mcp").addHandler(logging.NullHandler())

START_SECONDS = 60.0


class MCPError(RagteamError):
    """An MCP server could not be started or stopped answering."""


class MCPServer:
    """A running MCP server and its tools (`.tools`); use as a context manager or `close()`."""

    def __init__(self, command: str, *, timeout: float = 30.0, prefix: str | None = None):
        try:
            from mcp import ClientSession, StdioServerParameters, stdio_client
        except ImportError as exc:
            raise InputError("MCP tools need the mcp extra: pip install 'ragteam[mcp]'") from exc
        try:
            argv = shlex.split(command)
        except ValueError as exc:  # an unclosed quote
            raise InputError(
                f"--mcp {command!r}: {exc}; quote the command as a shell would"
            ) from exc
        if not argv:
            raise InputError("--mcp needs a command that starts an MCP server over stdio")
        self.command, self.timeout = command, timeout
        self._params = StdioServerParameters(command=argv[0], args=argv[1:])
        self._session_cls, self._client = ClientSession, stdio_client
        self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 (closed in close)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="mcp")
        self._thread.start()
        self._session: Any = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Future[Any] | None = None
        try:
            listed, name = self._submit(self._open(), START_SECONDS)
        except BaseException as exc:
            self.close()
            reason = _innermost(exc)
            raise MCPError(
                f"the MCP server `{command}` did not start: {reason}{self._log()}"
            ) from exc
        self.name = prefix or _identifier(name or argv[-1])
        self.tools, self.skipped = [], []
        for item in listed:
            problem = _schema_problem(item.input_schema)
            if problem:  # a tool whose schema cannot validate arguments is left out, said here
                self.skipped.append(f"{item.name}: {problem}")
                log.warning("MCP tool %s.%s skipped: %s", self.name, item.name, problem)
            else:
                self.tools.append(self._tool(item))

    def __enter__(self) -> MCPServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        """Call one of the server's tools (its own name, without the prefix)."""
        if self._session is None:
            raise MCPError(f"the MCP server `{self.command}` is closed")
        result = self._submit(
            self._session.call_tool(name, arguments, read_timeout_seconds=self.timeout),
            self.timeout + 5,
        )
        text = "\n".join(getattr(c, "text", "") or f"[{c.type} content]" for c in result.content)
        if result.is_error:
            raise RuntimeError(text or "the tool reported an error")
        return ToolOutput(text)

    def close(self) -> None:
        if self._task is not None and self._loop.is_running():
            with contextlib.suppress(BaseException):  # the server is going away in any case
                self._submit(self._shutdown(), 10)
        self._session = None
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
        self._errlog.close()

    async def _open(self) -> tuple[list[Any], str]:
        self._stop = asyncio.Event()
        ready: asyncio.Future[tuple[list[Any], str]] = self._loop.create_future()
        self._task = asyncio.ensure_future(self._serve(ready))
        return await ready

    async def _shutdown(self) -> None:
        if self._stop is not None and self._task is not None and not self._task.done():
            self._stop.set()
            try:  # a session stuck before its loop (initialize never answered) is cancelled,
                await asyncio.wait_for(asyncio.shield(self._task), 5)  # which ends the process
            except TimeoutError:
                self._task.cancel()
                with contextlib.suppress(BaseException):
                    await self._task

    async def _serve(self, ready: asyncio.Future[Any]) -> None:
        try:
            async with (
                self._client(self._params, errlog=self._errlog) as (read, write),
                self._session_cls(read, write) as session,
            ):
                info = await session.initialize()
                listed = await session.list_tools()
                self._session = session
                ready.set_result((listed.tools, getattr(info.server_info, "name", "")))
                assert self._stop is not None
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            else:
                raise

    def _submit(self, coroutine: Any, timeout: float) -> Any:
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer from the MCP server after {timeout:g} s") from None

    def _tool(self, listed: Any) -> Tool:
        own = listed.name

        def call(**arguments: Any) -> ToolOutput:
            return self.call(own, arguments)

        schema = dict(listed.input_schema or {"type": "object", "properties": {}})
        schema.pop("title", None)
        return Tool(
            f"{self.name}.{own}",
            " ".join((listed.description or own).split()),
            schema,
            call,
            self.timeout + 10,
        )

    def _log(self) -> str:
        try:
            self._errlog.seek(0)
            tail = self._errlog.read()[-800:].strip()
        except (OSError, ValueError):
            return ""
        return f"\nits stderr ends with:\n{tail}" if tail else ""


def _schema_problem(schema: Any) -> str:
    """Why a tool's input schema is unusable ('' when it is fine)."""
    import jsonschema

    if schema is None:
        return ""
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        return f"its input schema is invalid ({exc.message})"
    return ""


def _innermost(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


def _identifier(text: str) -> str:
    name = re.sub(r"[^\w-]+", "_", text.rsplit("/", 1)[-1].removesuffix(".py")).strip("_")
    return name if NAME.match(name or "") else "mcp"
