"""Tools for agents: typed Python functions, the built-in search/lookup/calculator/today, and
tools of MCP servers. Third-party tools register through the `ragteam.tools` entry-point group."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from ragteam.errors import InputError
from ragteam.plugins import Registry
from ragteam.tools.base import Tool, ToolBox, ToolOutput, ToolResult, bound, make_tool, tool
from ragteam.tools.builtin import calculator, general_tools, index_tools, today

__all__ = [
    "Tool",
    "ToolBox",
    "ToolOutput",
    "ToolResult",
    "bound",
    "calculator",
    "general_tools",
    "import_tool",
    "index_tools",
    "make_tool",
    "plugin_tools",
    "today",
    "tool",
]


def import_tool(spec: str) -> Tool:
    """`module:function` (as `--tools` takes it) -> a Tool."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise InputError(f"--tools {spec!r}: write it as module:function, e.g. mytools:weather")
    here = str(Path.cwd())
    if here not in sys.path:  # a tools file in the current folder, as `python -m` would find it
        sys.path.append(here)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"--tools {spec!r}: cannot import {module_name} ({exc})") from exc
    except Exception as exc:  # a syntax error or an exception raised at import
        raise InputError(
            f"--tools {spec!r}: importing {module_name} failed: {type(exc).__name__}: {exc}"
        ) from exc
    func: Any = getattr(module, attr, None)
    if func is None:
        raise InputError(f"--tools {spec!r}: {module_name} has no attribute {attr}")
    return make_tool(func)


TOOLS = Registry("tool", "ragteam.tools")  # plugins only: built-in tools come with the index


def plugin_tools() -> list[Tool]:
    """Tools registered by installed packages (entry-point group `ragteam.tools`)."""
    return [make_tool(TOOLS.load(name), name=name) for name in TOOLS.names()]
