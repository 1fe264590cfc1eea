"""A throwaway Ray cluster on 127.0.0.1: a head and worker nodes as separate processes (what
the tests and benchmarks run against; the same as `ray start` by hand)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ragteam.errors import InputError
from ragteam.scale.cluster import need_ray


def _ray_cli() -> str:
    found = shutil.which("ray") or str(Path(sys.executable).with_name("ray"))
    if not Path(found).exists():
        raise InputError("the `ray` command is missing: `pip install 'ragteam[ray]'`")
    return found


@contextmanager
def local_cluster(
    nodes: int = 2, cpus_per_node: int = 1, temp_dir: Path | None = None
) -> Iterator[str]:
    """Start `nodes` Ray nodes (the first is the head) on loopback; yields the address. Each
    node is a `ray start --block` in its own process group, stopped with it after (a Ray
    cluster the user runs on this machine is left alone)."""
    ray = need_ray()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    common = ["--node-ip-address", "127.0.0.1", "--num-cpus", str(cpus_per_node)]
    common += ["--disable-usage-stats", "--block"]
    head = ["--head", "--port", str(port), "--include-dashboard", "false"]
    if temp_dir:
        head += ["--temp-dir", str(temp_dir)]
    address = f"127.0.0.1:{port}"
    started: list[subprocess.Popen] = []
    try:
        for i in range(nodes):
            extra = head if i == 0 else ["--address", address]
            started.append(
                subprocess.Popen(
                    [_ray_cli(), "start", *extra, *common],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
            if i == 0:
                _wait_for_head(ray, address, started[0])
        _wait_for_cpus(ray, address, nodes * cpus_per_node)
        yield address
    finally:
        for proc in reversed(started):
            _stop(proc)


def _stop(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _wait_for_head(ray, address: str, proc: subprocess.Popen, timeout: float = 120) -> None:  # noqa: ANN001
    deadline = time.time() + timeout
    host, port = address.rsplit(":", 1)
    while time.time() < deadline:
        if proc.poll() is not None:
            raise InputError(f"`ray start --head` exited with {proc.returncode}")
        try:  # ray.init blocks past any deadline when nothing listens: knock first
            socket.create_connection((host, int(port)), timeout=1).close()
        except OSError:
            time.sleep(1)
            continue
        try:
            ray.init(address=address, logging_level="ERROR", log_to_driver=False)
        except (ConnectionError, RuntimeError):
            time.sleep(1)
            continue
        ray.shutdown()
        return
    raise InputError(f"the Ray head at {address} did not start within {timeout:.0f} s")


def _wait_for_cpus(ray, address: str, cpus: int, timeout: float = 60) -> None:  # noqa: ANN001
    deadline = time.time() + timeout
    while True:
        ray.init(address=address, logging_level="ERROR", log_to_driver=False)
        seen = ray.cluster_resources().get("CPU", 0)
        ray.shutdown()
        if seen >= cpus:
            return
        if time.time() > deadline:
            raise InputError(
                f"the local Ray cluster at {address} shows {seen:g} of {cpus} CPUs after "
                f"{timeout:.0f} s; a node did not join"
            )
        time.sleep(1)
