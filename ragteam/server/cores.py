"""The cores answers running at once share: an answer that runs alone gets every core of its
process for its network passes (the span reader, the encoders), and N at once get an even
split each, decided as each answer starts. A fixed split (cores / --concurrency) made a lone
person's answer wait on one core while the other stayed idle (docs/benchmarks.md §65)."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator


def process_share(processes: int) -> int:
    """Each of `processes` serving processes' share of the machine's cores (at least 1)."""
    return max(1, (os.cpu_count() or 1) // max(1, processes))


class CoreShare:
    """Counts the answers running; `running()` wraps one answer in its worker thread and sets
    that thread's torch threads (torch keeps the count a thread at a time) to `cores` over
    the answers running then, at least 1."""

    def __init__(self, cores: int | None = None) -> None:
        self.cores = max(1, cores or process_share(1))
        self._running = 0
        self._lock = threading.Lock()

    @property
    def now(self) -> int:
        """Answers running."""
        return self._running

    def threads(self, running: int) -> int:
        """Torch threads for each of `running` answers at once."""
        return max(1, self.cores // max(1, running))

    @contextlib.contextmanager
    def running(self) -> Iterator[int]:
        """One answer runs in this thread meanwhile; yields its torch threads."""
        with self._lock:
            self._running += 1
            threads = self.threads(self._running)
        torch = sys.modules.get("torch")  # not imported by an answer that needs no network
        if torch is not None:
            torch.set_num_threads(threads)
        try:
            yield threads
        finally:
            with self._lock:
                self._running -= 1
