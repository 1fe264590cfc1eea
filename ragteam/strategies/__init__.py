"""Strategies by name. A strategy turns a question into an `Answer` with citations and trace.

Third-party strategies register through the `ragteam.strategies` entry-point group; built-in
ones are registered the same way in `registry.py`.
"""

from __future__ import annotations

from ragteam.strategies.base import Context, Strategy, bounded
from ragteam.strategies.registry import (
    DEFAULT_STRATEGY,
    available,
    check_roles,
    client_options,
    convert_option,
    make_strategy,
    option_bounds,
    strategy_class,
    strategy_options,
    strategy_roles,
)

__all__ = [
    "DEFAULT_STRATEGY",
    "Context",
    "Strategy",
    "available",
    "bounded",
    "check_roles",
    "client_options",
    "convert_option",
    "make_strategy",
    "option_bounds",
    "strategy_class",
    "strategy_options",
    "strategy_roles",
]
