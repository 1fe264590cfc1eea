"""Strategies by name. A strategy turns a question into an `Answer` with citations and trace.

Third-party strategies register through the `ragteam.strategies` entry-point group.
"""

from __future__ import annotations

import dataclasses
from importlib.metadata import entry_points
from typing import Any

from ragteam.errors import InputError, UnknownName
from ragteam.strategies.adaptive import Adaptive
from ragteam.strategies.base import Context, Strategy
from ragteam.strategies.baselines import NoR, OneR
from ragteam.strategies.ircot import IRCoT
from ragteam.strategies.marag import MARAG
from ragteam.strategies.smart import Smart
from ragteam.strategies.smurfs import Smurfs

__all__ = [
    "Context",
    "Strategy",
    "available",
    "check_roles",
    "client_options",
    "make_strategy",
    "strategy_options",
    "strategy_roles",
]

BUILTIN: dict[str, type] = {
    cls.name: cls for cls in (NoR, OneR, IRCoT, Smart, MARAG, Smurfs, Adaptive)
}


def _registry() -> dict[str, type]:
    found = dict(BUILTIN)
    for ep in entry_points(group="ragteam.strategies"):
        found.setdefault(ep.name, ep.load())
    return found


def available() -> list[str]:
    return sorted(_registry())


def make_strategy(name: str, options: dict[str, Any] | None = None) -> Strategy:
    """Build a strategy by name; options are its dataclass fields (unknown ones are an error)."""
    registry = _registry()
    if name not in registry:
        raise UnknownName("strategy", name, list(registry))
    cls = registry[name]
    options = options or {}
    if dataclasses.is_dataclass(cls):
        declared = strategy_options(name)
        unknown = sorted(set(options) - set(declared))
        if unknown:
            raise InputError(
                f"strategy '{name}' has no option {', '.join(unknown)}; "
                f"its options: {', '.join(sorted(declared)) or 'none'}"
            )
        options = {
            key: convert_option(name, key, value, declared[key][0])
            for key, value in options.items()
        }
    return cls(**options)


def strategy_options(name: str) -> dict[str, tuple[str, Any]]:
    """Option name -> (type name, default) of a registered strategy."""
    cls = _registry()[name]
    if not dataclasses.is_dataclass(cls):
        return {}
    return {
        f.name: (str(f.type), f.default)
        for f in dataclasses.fields(cls)
        if f.init and f.default is not dataclasses.MISSING
    }


_CLIENT_KINDS = ("bool", "int", "float", "bool | None")


def client_options(name: str) -> list[str]:
    """Options an HTTP client may set: numbers and switches, and the text options a strategy
    lists in `client_text_options` (choices such as smart's `mode`). Anything else (a file
    path such as adaptive's router `state`) is the server operator's alone."""
    registry = _registry()
    if name not in registry:
        raise UnknownName("strategy", name, list(registry))
    text = set(getattr(registry[name], "client_text_options", ()))
    return sorted(
        key
        for key, (kind, _) in strategy_options(name).items()
        if kind in _CLIENT_KINDS or (kind == "str" and key in text)
    )


def strategy_roles(name: str) -> tuple[str, ...]:
    """The agent roles of a strategy; a router's are those of every strategy it can call."""
    registry = _registry()
    if name not in registry:
        raise UnknownName("strategy", name, list(registry))
    roles = tuple(getattr(registry[name], "roles", ()))
    if name == "adaptive":
        found = {r for other in registry if other != name for r in strategy_roles(other)}
        return tuple(sorted(found))
    return roles


def check_roles(names: list[str], roles: list[str]) -> None:
    """Every `--role-model` role must belong to one of the strategies that run."""
    known = {r for n in names for r in strategy_roles(n)}
    wrong = sorted(set(roles) - known)
    if wrong:
        raise InputError(
            f"unknown role {', '.join(wrong)} for strategy {', '.join(names)}; "
            f"its roles: {', '.join(sorted(known)) or 'none'}"
        )


# Bounds of integer options by name; others must lie in [0, 100_000].
BOUNDS = {
    "k": (1, 100),
    "max_intents": (1, 10),
    "max_passages": (1, 50),
    "max_steps": (1, 20),
    "max_answer_tokens": (1, 2048),
    "max_subtasks": (1, 10),
    "max_tool_calls": (1, 100),
    "max_calls": (1, 500),
    "output_chars": (100, 20_000),
}
_TRUE, _FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off")


def convert_option(strategy: str, key: str, value: Any, kind: str) -> Any:
    """Check and convert one `--opt` value to the option's declared type and range."""
    where = f"--opt {strategy}.{key}={value!r}"
    if kind.endswith(" | None"):
        if value is None or str(value).strip().lower() in ("", "none", "auto", "null"):
            return None
        kind = kind.removesuffix(" | None")
    if kind == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise InputError(f"{where}: expected true or false")
    if kind in ("int", "float"):
        try:
            number = int(value) if kind == "int" else float(value)
        except (TypeError, ValueError):
            expected = "an integer" if kind == "int" else "a number"
            raise InputError(f"{where}: expected {expected}") from None
        if isinstance(value, bool) or (kind == "int" and isinstance(value, float)):
            raise InputError(f"{where}: expected an integer")
        low, high = BOUNDS.get(key, (0, 100_000))
        if not low <= number <= high:
            raise InputError(f"{where}: must be between {low} and {high}")
        return number
    if kind == "str":
        return str(value)
    return value
