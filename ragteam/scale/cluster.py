"""Connecting to a Ray cluster, with errors that say what to do."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ragteam.errors import InputError, RagteamError


class ClusterLost(RagteamError):
    """The Ray cluster failed while it worked (a node or the head gone, an actor dead)."""


def need_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise InputError("--ray needs Ray: `pip install 'ragteam[ray]'`") from exc
    return ray


@contextmanager
def connected(address: str) -> Iterator[Any]:
    """`ray.init` on `address` ("auto": the cluster this machine belongs to); disconnects after
    (the cluster keeps running). Usage statistics stay off: nothing leaves the cluster."""
    ray = need_ray()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    started_here = not ray.is_initialized()
    if started_here:
        try:
            ray.init(address=address, logging_level="ERROR", log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise InputError(
                f"could not reach a Ray cluster at {address} ({exc}); start one with "
                "`ray start --head` or pass its address, e.g. --ray 127.0.0.1:6379"
            ) from exc
    try:
        yield ray
    finally:
        if started_here:
            ray.shutdown()
