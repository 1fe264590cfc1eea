"""A tool's JSON schema from a typed Python function: arguments and types from the signature,
descriptions from the docstring (first paragraph; `Args:` lines `name: what it is`)."""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union

from ragteam.errors import InputError

_SIMPLE: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    dict: {"type": "object"},
    list: {"type": "array"},
}


def type_schema(hint: Any, where: str) -> dict[str, Any]:
    """The JSON schema of one annotation; unsupported annotations are an error naming `where`."""
    if hint in _SIMPLE:
        return dict(_SIMPLE[hint])
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (Union, types.UnionType):
        kept = [a for a in args if a is not type(None)]
        if len(kept) == 1:
            return type_schema(kept[0], where)
        return {"anyOf": [type_schema(a, where) for a in kept]}
    if origin in (list, tuple, set, frozenset) or origin is typing.Sequence:
        item = args[0] if args else str
        return {"type": "array", "items": type_schema(item, where)}
    if origin is dict:
        return {"type": "object"}
    raise InputError(
        f"{where}: type {hint!r} is not supported for tool arguments; use str, int, float, "
        "bool, list[...], dict, Literal[...] or Optional[...]"
    )


def describe(func: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """(description, argument -> description) from a docstring."""
    doc = inspect.getdoc(func) or ""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", doc) if p.strip()]
    summary = " ".join(paragraphs[0].split()) if paragraphs else ""
    if summary.lower().startswith(("args:", "arguments:", "parameters:")):
        summary = ""
    described: dict[str, str] = {}
    in_args = False
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.lower() in ("args:", "arguments:", "parameters:"):
            in_args = True
            continue
        if in_args and (match := re.match(r"^(\w+)\s*(\([^)]*\))?\s*:\s*(.+)$", stripped)):
            described[match.group(1)] = match.group(3).strip()
        elif in_args and stripped and not line.startswith((" ", "\t")):
            in_args = False
    return summary, described


def function_schema(func: Callable[..., Any], name: str) -> tuple[str, dict[str, Any]]:
    """(description, JSON schema of the arguments) of a typed, documented function."""
    summary, described = describe(func)
    if not summary:
        raise InputError(f"tool '{name}' has no docstring: say in its first line what it does")
    try:
        hints = typing.get_type_hints(func)
    except Exception as exc:  # unresolvable forward references
        raise InputError(f"tool '{name}': cannot read its type annotations ({exc})") from exc
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in inspect.signature(func).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise InputError(f"tool '{name}': *args and **kwargs cannot be described to a model")
        if param.name not in hints:
            raise InputError(f"tool '{name}': argument '{param.name}' has no type annotation")
        schema = type_schema(hints[param.name], f"tool '{name}', argument '{param.name}'")
        if param.name in described:
            schema["description"] = described[param.name]
        if param.default is param.empty:
            required.append(param.name)
        elif param.default is not None:
            schema["default"] = param.default
        properties[param.name] = schema
    schema = {"type": "object", "properties": properties, "required": required}
    return summary, schema
