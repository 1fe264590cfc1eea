"""An answer as a stream of events, for every streaming route (the page's SSE, OpenAI chat
chunks): ("step", dict) as each trace step happens, then ("answer", Answer) or ("error",
exception). The work runs in the service's worker threads; a consumer that stops (its client
went away) stops the work at its next step, and the slot is freed when the work has stopped.
The caller has taken a slot of the service's gate; it is released here."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from ragteam.server.service import Cancelled, Service, step_event

log = logging.getLogger("ragteam.server")


async def answer_events(
    service: Service, body: Any, cancelled: Callable[[], bool] | None = None
) -> AsyncIterator[tuple[str, Any]]:
    """`cancelled`: checked at every step too (a non-streaming client that went away)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    gone = False
    count = 0

    def on_step(step: Any) -> None:
        nonlocal count
        if gone or (cancelled is not None and cancelled()):
            raise Cancelled("the client went away")
        count += 1
        loop.call_soon_threadsafe(queue.put_nowait, ("step", step_event(count, step)))

    def work() -> None:
        try:
            result = service.answer(body, on_step)
            loop.call_soon_threadsafe(queue.put_nowait, ("answer", result))
        except Cancelled:
            log.info("stream cancelled by its client after %d steps", count)
        except Exception as exc:  # reported to the client as an event
            loop.call_soon_threadsafe(queue.put_nowait, ("error", exc))
        finally:
            service.gate.release()
            loop.call_soon_threadsafe(queue.put_nowait, ("end", None))

    try:
        service.pool.submit(work)
    except RuntimeError:  # shutting down
        service.gate.release()
        raise
    try:
        while True:
            event, data = await queue.get()
            if event == "end":
                return
            yield event, data
    finally:
        gone = True


async def answer_watched(service: Service, body: Any, request: Any) -> Any:
    """The answer of a non-streaming request; the work stops at its next step when the client
    disconnects (the server does not compute answers no one will read)."""
    gone = False

    async def watch() -> None:
        nonlocal gone
        while not await request.is_disconnected():
            await asyncio.sleep(0.25)
        gone = True

    watcher = asyncio.create_task(watch())
    try:
        async for event, data in answer_events(service, body, lambda: gone):
            if event == "error":
                raise data
            if event == "answer":
                return data
    finally:
        watcher.cancel()
    raise Cancelled("the client went away")
