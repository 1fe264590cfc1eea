"""A model asked for by two threads at once is loaded once (`ragteam.common.once.loaded_once`)."""

from __future__ import annotations

import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from ragteam.common.once import loaded_once


def test_two_threads_asking_at_once_compute_once_and_share_the_value():
    calls: list[str] = []
    started = threading.Barrier(2)

    @loaded_once(maxsize=2)
    def load(name: str) -> object:
        calls.append(name)
        time.sleep(0.2)  # long enough for the other thread to ask meanwhile
        return object()

    def ask() -> object:
        started.wait()
        return load("model")

    with ThreadPoolExecutor(2) as pool:
        first, second = pool.map(lambda _: ask(), range(2))
    assert calls == ["model"]
    assert first is second
    assert load("other") is not first and calls == ["model", "other"]


def test_the_reader_asked_for_by_two_threads_at_once_is_one_network(tmp_path):
    """A server preloads the reader in a thread while its first question asks for it: a copy
    of the shipped weights (a path no test has loaded) asked for twice at once."""
    from ragteam.reader import load_reader
    from ragteam.reader.read import calibration_path, default_weights

    weights = tmp_path / "reader-minilm.safetensors"
    shutil.copy(default_weights(), weights)
    shutil.copy(calibration_path(default_weights()), calibration_path(weights))
    started = threading.Barrier(2)

    def ask() -> object:
        started.wait()
        return load_reader(weights).net

    with ThreadPoolExecutor(2) as pool:
        first, second = pool.map(lambda _: ask(), range(2))
    assert first is second
