"""ragteam as an MCP server (official `mcp` SDK): tools `ask` (an agent team answers, with
citations and a short trace summary; progress notifications as its steps happen), `search`
(passages with ids and scores) and `passage` (one passage's text), and the served indexes as
resources `index://NAME`. Over stdio (`ragteam mcp --index ...`) or streamable HTTP on
127.0.0.1 (`--http`). The limits are the HTTP API's: the question length, the option allow-list
(no request names a server file), one answer at a time with a bounded queue."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import json
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, ValidationError

from ragteam._version import __version__
from ragteam.asking import ask_fields, ask_hints
from ragteam.errors import RagteamError
from ragteam.server.asking import Asked
from ragteam.server.limits import Busy
from ragteam.server.redact import redact_paths
from ragteam.server.service import Service
from ragteam.server.streaming import answer_events
from ragteam.server.words import step_words
from ragteam.strategies import available, strategy_class
from ragteam.support.layers import layer_names
from ragteam.types import hit_dict

MAX_K = 50
SESSION_IDLE_S = 600.0  # an MCP-over-HTTP session unused this long is closed
MAX_SESSIONS = 64  # sessions held at once; a new one beyond is refused until one ends


class _PlainErrors(MCPServer):
    """The SDK's server, saying a tool's bad arguments in one plain line per argument (what
    is wrong and what was given) instead of pydantic's report with its links."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(bad_arguments(name, exc.__cause__)) from exc.__cause__
            raise


def bad_arguments(tool: str, error: ValidationError) -> str:
    """`tool`'s argument errors, one plain clause each ("k: a whole number, not 'many'")."""
    said = []
    for e in error.errors(include_url=False):
        where = ".".join(str(part) for part in e.get("loc", ())) or "arguments"
        if e.get("type") == "missing":
            said.append(f"{where} is required")
            continue
        given = repr(e.get("input"))
        given = given if len(given) <= 60 else given[:57] + "..."
        said.append(f"{where}: {e.get('msg', 'not valid').rstrip('.').lower()} (given {given})")
    return f"bad arguments for `{tool}`: " + "; ".join(said)


def build_mcp(service: Service) -> MCPServer:
    names = ", ".join(service.config.indexes) or "none"
    server = _PlainErrors(
        "ragteam",
        version=__version__,
        instructions=(
            "Answer knowledge-intensive questions with teams of LLM agents over the served "
            f"indexes ({names}). `ask` runs a strategy (oner, ircot, smart, marag, smurfs, ...) "
            "and returns the answer with citations; `search` and `passage` read the index."
        ),
    )
    _add_ask(server, service)
    _add_reading(server, service)
    for name in service.config.indexes:
        _add_index_resource(server, service, name)
    return server


def mcp_http_app(
    service: Service, idle_s: float = SESSION_IDLE_S, max_sessions: int = MAX_SESSIONS
) -> Any:
    """MCP over streamable HTTP behind the HTTP API's front door: the server's key (when one
    is set) on every request, bounded bodies, and sessions that end when idle and are
    bounded in number (each holds memory)."""
    from ragteam.server.guard import BodyGuard

    app = build_mcp(service).streamable_http_app(
        session_idle_timeout=idle_s, max_sessions=max_sessions
    )
    config = service.config
    return BodyGuard(app, config.max_body_bytes, lambda: config.api_key, every_request=True)


def _add_ask(server: MCPServer, service: Service) -> None:
    async def ask(
        question: str, ctx: Context, index: str | None = None, **given: Any
    ) -> dict[str, Any]:
        """Answer a question with an agent team over a served index: the answer (`marked`:
        with [n] after each sentence a passage supports), its citations (passage ids that
        `passage` opens), the passages read, how well it is supported, and a short summary of
        the agents' steps. `question` at most 4,000 characters; `index` a served index
        (optional when one is served); the other arguments say how to answer."""
        try:
            asked = Asked(question=question, index=index, **given)
            service.check(asked)
            await service.gate.acquire()
        except Exception as exc:  # a clear message for the client, not "error executing"
            raise ToolError(_said(exc, service)) from exc
        # the answering routes' one path: a call the client cancels stops at its next step or
        # token, and its slot is freed when the work has stopped, not at the cancel
        async with contextlib.aclosing(answer_events(service, asked)) as events:
            async for event, data in events:
                if event == "step":
                    await ctx.report_progress(data["number"], None, step_words(data))
                elif event == "error":
                    raise ToolError(_said(data, service)) from data
                elif event == "answer":
                    return _payload(data)
        raise ToolError("the answer stopped before it was written")

    _declare_ask(ask, service)
    server.tool()(ask)


def _declare_ask(ask: Any, service: Service) -> None:
    """`ask`'s signature as the SDK reads it: the question, the context, the index, then the
    answer options (`ragteam.asking.AskRequest`'s served fields, each with its help), the
    choices named: the strategies this server can run, the indexes it serves, every support
    layer but the checker (it needs a file of the caller's machine)."""
    names: dict[str, tuple[str, ...]] = {
        "strategy": tuple(s for s in available() if not _unavailable(service, s)),
        "support": tuple(n for n in layer_names() if n != "checker"),
    }
    index: Any = str | None
    if service.config.indexes:
        index = Literal[tuple(service.config.indexes)] | None  # type: ignore[valid-type]
    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [
        inspect.Parameter("question", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str),
        inspect.Parameter("ctx", keyword, annotation=Context),
        inspect.Parameter("index", keyword, default=None, annotation=index),
    ]
    hints = ask_hints()
    for f in ask_fields("served"):
        reach = f.metadata["reach"]
        chosen = names.get(f.name) or (reach.names() if reach.names else None)
        kind = Literal[chosen] if chosen else hints[f.name]  # type: ignore[valid-type]
        has_factory = f.default_factory is not dataclasses.MISSING
        default = f.default_factory() if has_factory else f.default  # type: ignore[misc]
        described = Annotated[kind, Field(description=f.metadata["flag"].help)]
        params.append(inspect.Parameter(f.name, keyword, default=default, annotation=described))
    ask.__signature__ = inspect.Signature(params, return_annotation=dict[str, Any])
    ask.__annotations__ = {p.name: p.annotation for p in params} | {"return": dict[str, Any]}


def _unavailable(service: Service, name: str) -> str:
    """Why `name` cannot answer on this server ('' when it can)."""
    check = getattr(strategy_class(name), "unavailable", None)
    return check(service.options_for(name)) if callable(check) else ""


def _said(exc: Exception, service: Service) -> str:
    """An error as a client of the server reads it: no server paths, the API's terms (a
    request the checks refuse says which argument and why, as HTTP's 422 does)."""
    if isinstance(exc, ValidationError):
        message = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'request'}: {e['msg']}" for e in exc.errors()
        )
    else:
        message = str(exc) if isinstance(exc, RagteamError | Busy) else "internal error"
    return redact_paths(message, service.config)


def _payload(answer: Any) -> dict[str, Any]:
    """What `ask` returns: the answer, citations, grounding and a summary of the steps."""
    steps = answer.trace.steps if answer.trace else []
    return {
        "answer": answer.text,
        "marked": answer.marked_text(),
        "strategy": answer.strategy,
        "citations": [c.to_dict() for c in answer.citations],
        "read": [c.to_dict() for c in answer.read],
        "evidence": [e.to_dict() for e in answer.evidence],
        "why": answer.why,
        "grounding": answer.grounding().to_dict(),
        # the reader's words it is not sure of: where to look, not an answer (as the page shows)
        "closest": closest.to_dict() if (closest := answer.closest()) else None,
        "steps": [
            {
                "kind": s.kind,
                "role": s.role,
                "seconds": round(s.seconds, 3),
                "failed": bool(s.error or s.parse_failures),
            }
            for s in steps
        ],
        "cost": answer.trace.totals() if answer.trace else {},
    }


def _add_reading(server: MCPServer, service: Service) -> None:
    @server.tool()
    def search(query: str, k: int = 5, index: str | None = None) -> list[dict[str, Any]]:
        """Passages of a served index for a query, best first, with ids, scores and where each
        stands (`locator`: source file, page and printed label, section, slide).

        Args:
            query: what to look for
            k: how many passages (1-50)
            index: a served index (optional when one is served)
        """
        if not 1 <= k <= MAX_K:
            raise ToolError(f"k must be between 1 and {MAX_K}")
        if len(query) > service.config.max_question_chars:
            raise ToolError(
                f"the query has {len(query):,} characters; at most "
                f"{service.config.max_question_chars:,}"
            )
        loaded = _loaded(service, index)
        return [hit_dict(p) for p in loaded.retrieve(query, k)]

    @server.tool()
    def passage(passage_id: str, index: str | None = None) -> dict[str, Any]:
        """The full text of one passage and where it stands (a `passage_id` of a citation of
        `ask`, or an `id` from `search`).

        Args:
            passage_id: the passage id, as citations name it
            index: a served index (optional when one is served)
        """
        found = _loaded(service, index).passage(passage_id)
        if found is None:
            raise ToolError(f"no passage '{passage_id}' in this index: ids come from search or ask")
        where = found.locator.to_dict() if found.locator is not None else None
        return {"passage_id": found.id, "title": found.title, "text": found.text, "locator": where}


def _loaded(service: Service, index: str | None) -> Any:
    name = service.index_name(index)
    if name is None:
        raise ToolError(f"name an index: {', '.join(service.config.indexes)}")
    try:
        loaded = service.index(name)
    except RagteamError as exc:
        raise ToolError(_said(exc, service)) from exc
    assert loaded is not None
    return loaded


def _add_index_resource(server: Any, service: Service, name: str) -> None:
    @server.resource(f"index://{name}", name=name, mime_type="application/json")
    def manifest() -> str:
        return json.dumps(service.public_manifest(name))
