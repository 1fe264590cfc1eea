"""The trace of one answer: every LLM, retrieval and tool step, in order, with its cost."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

StepKind = Literal["llm", "retrieve", "rerank", "read", "tool", "note", "support"]
# a model's reply so far (the text, tokens written) -> the answer it holds so far, if any
AnswerView = Callable[[str], str]
# what a backend calls as its reply grows: (the reply so far, tokens written so far)
TextSink = Callable[[str, int], None]


@dataclass(frozen=True)
class Writing:
    """A model call's reply as it is being written (before its step is recorded).

    `call` numbers the answer's model calls from 1 (a retry is a new call: its text starts
    again); `answer` is the part of `text` that is the answer so far, only for calls that
    write the answer (None for the others, whose text is the team's working)."""

    role: str
    call: int
    tokens: int
    text: str
    answer: str | None = None


@dataclass
class Step:
    kind: StepKind
    role: str
    input: Any
    output: Any
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cached: bool = False
    parse_failures: int = 0
    error: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Trace:
    """Ordered steps of one answer. Safe to append to from several threads."""

    steps: list[Step] = field(default_factory=list)
    # called with each step as it is added (e.g. to stream it); an exception it raises stops
    # the answer at that step (how a server cancels the work of a client that went away)
    on_step: Callable[[Step], None] | None = field(default=None, repr=False, compare=False)
    # called as each model call's reply grows (to show the answer being written); like
    # `on_step`, an exception it raises stops the answer, here in the middle of a call
    on_writing: Callable[[Writing], None] | None = field(default=None, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _calls: int = field(default=0, repr=False, compare=False)

    def add(self, step: Step) -> Step:
        with self._lock:
            self.steps.append(step)
        if self.on_step is not None:
            self.on_step(step)
        return step

    def writer(self, role: str, view: AnswerView | None = None) -> TextSink | None:
        """The sink a model call reports its growing reply to, as `Writing`s of one new call
        (None when nothing listens: the call then runs as it would unwatched). `view` picks
        the answer out of the text, for the calls that write the answer."""
        listener = self.on_writing
        if listener is None:
            return None
        with self._lock:
            self._calls += 1
            call = self._calls

        def sink(text: str, tokens: int) -> None:
            listener(Writing(role, call, tokens, text, view(text) if view else None))

        return sink

    def note(self, role: str, message: str, **meta: Any) -> Step:
        """Record something that is not a call but matters to the reader (e.g. a truncation)."""
        return self.add(Step(kind="note", role=role, input=None, output=message, meta=meta))

    def totals(self) -> dict[str, Any]:
        llm = [s for s in self.steps if s.kind == "llm"]
        return {
            "llm_calls": len(llm),
            "retrieval_calls": sum(1 for s in self.steps if s.kind == "retrieve"),
            "tool_calls": sum(1 for s in self.steps if s.kind == "tool"),
            "prompt_tokens": sum(s.prompt_tokens for s in llm),
            "completion_tokens": sum(s.completion_tokens for s in llm),
            # tokens the span reader read (the `read` steps): no model call, but model work
            "read_tokens": sum(s.prompt_tokens for s in self.steps if s.kind == "read"),
            "seconds": round(sum(s.seconds for s in self.steps), 4),
            "llm_seconds": round(sum(s.seconds for s in llm), 4),
            "cache_hits": sum(1 for s in llm if s.cached),
            "parse_failures": sum(s.parse_failures for s in self.steps),
            "errors": sum(1 for s in self.steps if s.error),
        }

    def parse_failures_by_role(self) -> dict[str, int]:
        counts: Counter[str] = Counter()
        for s in self.steps:
            if s.parse_failures:
                counts[s.role] += s.parse_failures
        return dict(counts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "steps": [asdict(s) for s in self.steps],
            "totals": self.totals(),
            "parse_failures_by_role": self.parse_failures_by_role(),
        }

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, default=str, **kwargs)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        return cls(steps=[Step(**s) for s in data.get("steps", [])])
