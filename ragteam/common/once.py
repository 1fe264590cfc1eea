"""A process's one copy of a loaded thing (a model, its tokenizer, its calibration): a
`functools.lru_cache` whose calls run one at a time, so that two threads asking at once for
a model not loaded yet (a server's preload and its first question) load it once, not twice."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def loaded_once(maxsize: int) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """`fn` cached by its arguments (the `maxsize` last used kept); a call waits while another
    thread computes a value, then finds it cached. One lock a function: loading one model never
    waits for another's."""

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        cached = functools.lru_cache(maxsize=maxsize)(fn)
        lock = threading.RLock()  # re-entrant: a loader may ask itself for a part

        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            with lock:
                return cached(*args, **kwargs)

        return call

    return wrap
