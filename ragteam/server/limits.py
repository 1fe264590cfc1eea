"""Admission control: a bounded queue in front of a fixed number of answer slots."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import threading
from collections.abc import Awaitable, Callable


class Busy(Exception):
    """No slot within the limits; retry after `retry_after` seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Closing(Busy):
    """The server is shutting down: a request that has not started is refused (503), and
    one running stops at its next step; a client retries on another server or later."""

    def __init__(self, message: str = "the server is shutting down; try again shortly") -> None:
        super().__init__(message, 5)


class Gate:
    """`concurrency` answers run at once; up to `queue_size` wait (each at most `timeout` s);
    more are refused at once. `release` may be called from any thread (the worker that ends
    the work, possibly after its client went away); waiting happens on the event loop."""

    def __init__(self, concurrency: int, queue_size: int, timeout: float) -> None:
        self.queue_size, self.timeout = queue_size, timeout
        self._free = concurrency
        self._waiters: collections.deque[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = (
            collections.deque()
        )
        self._lock = threading.Lock()
        self.closed = False

    def close(self) -> None:
        """Refuse every waiting request now and every later one (at SIGTERM: those waiting
        get a 503 at once instead of waiting out the grace period to be cut off). Safe to call
        from a signal handler or any thread."""
        with self._lock:
            self.closed = True
            waiters, self._waiters = list(self._waiters), collections.deque()
        for loop, granted in waiters:
            loop.call_soon_threadsafe(_refuse, granted)

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def try_acquire(self) -> bool:
        """Take a free slot now (True); False when the caller must queue; `Busy` when the
        queue is full too."""
        with self._lock:
            if self.closed:
                raise Closing()
            if self._free > 0:
                self._free -= 1
                return True
            if len(self._waiters) >= self.queue_size:
                raise Busy(f"{len(self._waiters)} answers are waiting; try again shortly", 5)
            return False

    async def acquire(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self.closed:
                raise Closing()
            if self._free > 0:
                self._free -= 1
                return
            if len(self._waiters) >= self.queue_size:
                raise Busy(f"{len(self._waiters)} answers are waiting; try again shortly", 5)
            granted: asyncio.Future[None] = loop.create_future()
            self._waiters.append((loop, granted))
        try:
            await asyncio.wait_for(granted, self.timeout)
        except TimeoutError:
            self._leave(loop, granted)
            raise Busy(f"no answer slot free within {self.timeout:g} s", 10) from None
        except asyncio.CancelledError:  # its client went away while it waited
            self._leave(loop, granted)
            raise

    async def acquire_unless(
        self, gone: Callable[[], Awaitable[bool]], every: float = 0.25
    ) -> bool:
        """Acquire, but give up the place in the queue as soon as `gone()` says the client
        left (checked every `every` s while waiting). True when a slot is held."""
        waiting = asyncio.ensure_future(self.acquire())
        while True:
            done, _ = await asyncio.wait({waiting}, timeout=every)
            if done:
                waiting.result()  # Busy propagates
                return True
            if await gone():
                waiting.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await waiting
                if not waiting.cancelled() and waiting.exception() is None:
                    self.release()  # granted in the same instant: hand it on
                return False

    def _leave(self, loop: asyncio.AbstractEventLoop, granted: asyncio.Future[None]) -> None:
        with self._lock:
            if (loop, granted) in self._waiters:
                self._waiters.remove((loop, granted))

    def release(self) -> None:
        with self._lock:
            if not self._waiters:
                self._free += 1
                return
            loop, granted = self._waiters.popleft()
        loop.call_soon_threadsafe(self._grant, granted)

    def _grant(self, granted: asyncio.Future[None]) -> None:
        if granted.done():  # its waiter gave up meanwhile: pass the slot on
            self.release()
        else:
            granted.set_result(None)


def _refuse(granted: asyncio.Future[None]) -> None:
    if not granted.done():
        granted.set_exception(Closing())
