"""Installed plugins: the entry points of one `ragteam.*` group (strategies, models, tools,
encoders, converters), read once per search path — a package put on the path later is still
found — and `Registry`, built-ins by name beside one such group."""

from __future__ import annotations

import functools
import importlib
import sys
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from ragteam.errors import RagteamError, UnknownName


def installed(group: str) -> dict[str, EntryPoint]:
    """Name -> entry point of every installed plugin in `group`."""
    return _read(group, tuple(sys.path))


@functools.lru_cache(maxsize=32)
def _read(group: str, path: tuple[str, ...]) -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=group)}


class Registry:
    """Named things of one kind (strategies, model backends, encoders, tools, document
    converters): built-ins by import path (`module:attr`, imported when first used) or as
    objects, plus the installed plugins of an entry-point group. An unknown name is an
    `UnknownName` listing the known ones; a plugin that fails to import says which."""

    def __init__(self, kind: str, group: str, builtins: dict[str, Any] | None = None) -> None:
        self.kind, self.group = kind, group
        self._builtins: dict[str, Any] = dict(builtins or {})
        self._loaded: dict[tuple[str, tuple[str, ...]], Any] = {}

    def register(self, name: str, target: Any) -> None:
        """Add (or replace) a built-in: an import path (`package.module:attr`) or the thing."""
        self._builtins[name] = target
        self._loaded = {k: v for k, v in self._loaded.items() if k[0] != name}

    def unregister(self, name: str) -> None:
        """Remove a built-in added by `register` (an installed plugin stays installed)."""
        self._builtins.pop(name, None)
        self._loaded = {k: v for k, v in self._loaded.items() if k[0] != name}

    def names(self) -> list[str]:
        return sorted({*self._builtins, *installed(self.group)})

    def __contains__(self, name: object) -> bool:
        return name in self._builtins or name in installed(self.group)

    def load(self, name: str) -> Any:
        key = (name, tuple(sys.path))
        if key in self._loaded:
            return self._loaded[key]
        target = self._builtins.get(name)
        if isinstance(target, str):
            module, _, attr = target.partition(":")
            value = getattr(importlib.import_module(module), attr)
        elif target is not None:
            value = target
        elif (entry := installed(self.group).get(name)) is not None:
            try:
                value = entry.load()
            except Exception as exc:  # a broken plugin is named, not a bare traceback
                raise RagteamError(
                    f"the {self.kind} plugin '{name}' ({entry.value}) failed to load: {exc}; "
                    "reinstall or uninstall the package that provides it"
                ) from exc
        else:
            raise UnknownName(self.kind, name, self.names())
        self._loaded[key] = value
        return value
