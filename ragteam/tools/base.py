"""Tools: typed functions an agent may call by name, and the box that calls them safely.

A call is checked against the tool's schema before it runs; an exception, a timeout or a bad
argument comes back as an error observation (never a crash); output is bounded; every call is a
`tool` step of the trace.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from ragteam.errors import InputError
from ragteam.tools.schema import function_schema
from ragteam.trace import Step, Trace
from ragteam.types import Passage

NAME = re.compile(r"^[A-Za-z_][\w.-]{0,63}$")
MAX_OUTPUT_CHARS = 2000


@dataclass(frozen=True)
class ToolOutput:
    """What a tool may return instead of plain text: the text and the passages it showed."""

    text: str
    passages: tuple[Passage, ...] = ()


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    func: Callable[..., Any] = field(compare=False, repr=False)
    timeout: float = 30.0
    # whether the tool can be of use now (e.g. lookup needs passages that search showed)
    ready: Callable[[], bool] = field(default=lambda: True, compare=False, repr=False)
    # the schema a model should fill right now, narrower than `parameters` (e.g. lookup's
    # passage_id limited to the ids search has shown, so a grammar cannot invent one)
    live_schema: Callable[[], dict[str, Any]] | None = field(
        default=None, compare=False, repr=False
    )

    def schema_now(self) -> dict[str, Any]:
        return self.live_schema() if self.live_schema is not None else self.parameters

    def describe(self) -> str:
        """One line for a prompt: name, arguments with types, what it does."""
        props = self.parameters.get("properties", {})
        args = ", ".join(f"{k}: {_type_name(v)}" for k, v in props.items())
        return f"{self.name}({args}): {self.description}"


@dataclass
class ToolResult:
    name: str
    arguments: dict[str, Any]
    text: str
    passages: tuple[Passage, ...] = ()
    error: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.text.strip())


def tool(
    func: Callable[..., Any] | None = None, *, name: str | None = None, timeout: float = 30.0
) -> Any:
    """Make a typed, documented function a `Tool` (`@tool` or `@tool(name=..., timeout=...)`)."""

    def wrap(f: Callable[..., Any]) -> Tool:
        return make_tool(f, name=name, timeout=timeout)

    return wrap(func) if func is not None else wrap


def make_tool(func: Callable[..., Any] | Tool, *, name: str | None = None, timeout=30.0) -> Tool:
    if isinstance(func, Tool):
        return func
    if not callable(func):
        raise InputError(f"{func!r} is not a function and cannot be a tool")
    called = name or getattr(func, "__name__", "")
    if not NAME.match(called):
        raise InputError(f"tool name {called!r}: use letters, digits, '_', '.', '-' (max 64)")
    description, parameters = function_schema(func, called)
    return Tool(called, description, parameters, func, timeout)


class ToolBox:
    """The tools one answer may use, by name; only these can be called."""

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = (), max_chars=MAX_OUTPUT_CHARS):
        self.max_chars = max_chars
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.add(make_tool(t))

    def add(self, new: Tool) -> None:
        if new.name in self._tools:
            raise InputError(f"two tools are named '{new.name}'; rename one (@tool(name=...))")
        self._tools[new.name] = new

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool:
        if name not in self._tools:
            raise InputError(f"no tool named '{name}'; tools: {', '.join(self._tools) or 'none'}")
        return self._tools[name]

    def __iter__(self):
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def call(self, name: str, arguments: Any, trace: Trace, role: str | None = None) -> ToolResult:
        """Run one tool; the outcome (or the error) is traced and returned, never raised."""
        started = time.perf_counter()
        result = self._run(name, arguments)
        result.seconds = time.perf_counter() - started
        trace.add(
            Step(
                kind="tool",
                role=role or name,
                input={"name": name, "arguments": arguments},
                output=result.text,
                seconds=result.seconds,
                error=result.error,
                meta={"tool": name, "passages": [p.id for p in result.passages]},
            )
        )
        return result

    def _run(self, name: str, arguments: Any) -> ToolResult:
        args = arguments if isinstance(arguments, dict) else {}
        if name not in self._tools:
            return ToolResult(name, args, "", error=f"there is no tool named {name!r}")
        chosen = self._tools[name]
        try:
            jsonschema.validate(arguments, chosen.parameters)
        except jsonschema.ValidationError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "arguments"
            return ToolResult(name, args, "", error=f"invalid arguments at {where}: {exc.message}")
        except jsonschema.SchemaError as exc:  # the tool's own schema is broken: not the agent's
            return ToolResult(name, args, "", error=f"{name} has an unusable schema: {exc.message}")
        outcome = _call_with_timeout(chosen, args)
        if isinstance(outcome, BaseException):
            kind = "timed out" if isinstance(outcome, TimeoutError) else "failed"
            return ToolResult(name, args, "", error=f"{name} {kind}: {outcome}")
        text, passages = _as_text(outcome)
        return ToolResult(name, args, bound(text, self.max_chars), passages)


def bound(text: str, max_chars: int) -> str:
    """Cut text to `max_chars`, saying so."""
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}\n[output cut: {max_chars:,} of {len(text):,} characters shown]"


def _call_with_timeout(chosen: Tool, args: dict[str, Any]) -> Any:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = chosen.func(**args)
        except BaseException as exc:  # the tool's failure is the agent's observation
            box["value"] = exc

    worker = threading.Thread(target=target, daemon=True, name=f"tool-{chosen.name}")
    worker.start()
    worker.join(chosen.timeout)
    if worker.is_alive():
        return TimeoutError(f"no result after {chosen.timeout:g} s")
    return box.get("value")


def _as_text(value: Any) -> tuple[str, tuple[Passage, ...]]:
    if isinstance(value, ToolOutput):
        return value.text, value.passages
    if value is None:
        return "", ()
    if isinstance(value, str):
        return value, ()
    try:
        return json.dumps(value, ensure_ascii=False, default=str), ()
    except (TypeError, ValueError):
        return str(value), ()


def _type_name(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "|".join(json.dumps(v) for v in schema["enum"])
    return str(schema.get("type", "any"))
