"""Installed plugins: the entry points of one `ragteam.*` group (strategies, models, tools,
encoders), read once per search path — a package put on the path later is still found."""

from __future__ import annotations

import functools
import sys
from importlib.metadata import EntryPoint, entry_points


def installed(group: str) -> dict[str, EntryPoint]:
    """Name -> entry point of every installed plugin in `group`."""
    return _read(group, tuple(sys.path))


@functools.lru_cache(maxsize=32)
def _read(group: str, path: tuple[str, ...]) -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=group)}
