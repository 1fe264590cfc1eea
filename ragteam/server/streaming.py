"""An answer as a stream of events, for every streaming route (the page's SSE, OpenAI chat
chunks): ("queued", dict) while it waits for a slot, ("started", {}) when it has one, ("step",
dict) as each trace step happens, ("writing", dict) as a model call's reply grows, then
("answer", Answer) or ("error", exception). The work runs in the service's worker threads;
a consumer that stops (its client went away) stops the work at its next step or token, and the
slot is freed when the work has stopped."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from ragteam.server.limits import Closing
from ragteam.server.service import Cancelled, Service, step_event
from ragteam.trace import Writing

# a reply that is not the answer is reported at most this often (a live token count)
WORKING_EVERY = 0.25

log = logging.getLogger("ragteam.server")


async def admitted_events(
    service: Service, body: Any, held: bool
) -> AsyncIterator[tuple[str, Any]]:
    """`answer_events` for a request that may not hold a slot yet (`held`, from
    `Gate.try_acquire`, which refused a full queue before the stream began): while it waits,
    a ("queued", {"ahead": n}) event says so; a slot that does not come in time is an error."""
    if not held:
        yield "queued", {"ahead": service.gate.waiting, "concurrency": service.config.concurrency}
        try:
            await service.gate.acquire()
        except Exception as exc:  # Busy: the wait timed out
            yield "error", exc
            return
    yield "started", {}
    async for event in answer_events(service, body):
        yield event


async def answer_events(
    service: Service, body: Any, cancelled: Callable[[], bool] | None = None
) -> AsyncIterator[tuple[str, Any]]:
    """`cancelled`: checked at every step and token too (a non-streaming client that went
    away). The caller holds a slot of the service's gate; it is released here."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    gone = False
    count = 0
    shown: dict[int, tuple[float, str | None]] = {}  # call -> when and what was last sent

    def stop_if_gone() -> None:
        if gone or (cancelled is not None and cancelled()):
            raise Cancelled("the client went away")

    def on_step(step: Any) -> None:
        nonlocal count
        stop_if_gone()
        count += 1
        loop.call_soon_threadsafe(queue.put_nowait, ("step", step_event(count, step)))

    def on_writing(part: Writing) -> None:
        stop_if_gone()
        now = time.monotonic()
        when, said = shown.get(part.call, (0.0, None))
        if now - when < WORKING_EVERY and (part.answer is None or part.answer == said):
            return  # the answer so far is sent as it grows, the rest as a token count
        shown[part.call] = (now, part.answer)
        loop.call_soon_threadsafe(queue.put_nowait, ("writing", writing_event(part)))

    def work() -> None:
        try:
            result = service.answer(body, on_step, on_writing)
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
    except RuntimeError as exc:  # shutting down: the pool takes no more work
        service.gate.release()
        raise Closing() from exc
    try:
        while True:
            event, data = await queue.get()
            if event == "end":
                return
            yield event, data
    finally:
        gone = True


def writing_event(part: Writing) -> dict[str, Any]:
    """A reply being written as the stream sends it: the answer so far for a call that
    writes the answer, else only who is writing and how much (the text comes with its step)."""
    event = {"role": part.role, "call": part.call, "tokens": part.tokens}
    return event if part.answer is None else {**event, "answer": part.answer}


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
