"""The span reader: a MiniLM trained here (`ragteam train reader`, weights shipped in the
package) that reads a question against every passage it is handed and returns the words that
answer it, where they stand, the sentence around them and how sure it is."""

from __future__ import annotations

import time

from ragteam.reader.read import Reader, Reading, Span, default_weights, load_reader
from ragteam.reader.spans import BRIDGE_SPANS
from ragteam.trace import Step, Trace
from ragteam.types import Passage

__all__ = [
    "BRIDGE_SPANS",
    "Reader",
    "Reading",
    "Span",
    "default_weights",
    "load_reader",
    "read_traced",
]


def read_traced(
    reader: Reader,
    trace: Trace,
    question: str,
    passages: list[Passage],
    top: int = 5,
    key_lines: bool = False,
    skip_echoes: bool = False,
) -> Reading:
    """Read and record the step (question, passage ids, the spans found, seconds)."""
    started = time.perf_counter()
    reading = reader.read(question, passages, top, key_lines, skip_echoes)
    trace.add(
        Step(
            kind="read",
            role="reader",
            input={"question": question, "passages": [p.id for p in passages]},
            output=reading.to_dict(),
            prompt_tokens=reading.tokens,
            seconds=time.perf_counter() - started,
            meta={"reader": reader.identity},
        )
    )
    return reading
