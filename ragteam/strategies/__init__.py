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

__all__ = ["Context", "Strategy", "available", "make_strategy"]

BUILTIN: dict[str, type] = {cls.name: cls for cls in (NoR, OneR, IRCoT, Smart, MARAG, Adaptive)}


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
        fields = {f.name for f in dataclasses.fields(cls) if f.init}
        unknown = sorted(set(options) - fields)
        if unknown:
            raise InputError(
                f"strategy '{name}' has no option {', '.join(unknown)}; "
                f"its options: {', '.join(sorted(fields)) or 'none'}"
            )
    return cls(**options)
