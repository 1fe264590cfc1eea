"""The trace of one answer: every LLM, retrieval and tool step, in order, with its cost."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from contextlib import nullcontext
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


CALLS = ("llm", "tool", "retrieve", "rerank", "read")  # step kinds that are work, not notes


@dataclass
class Tally:
    """What the steps of one answer came to, counted as each is added (or marked failed), so
    that nothing reads the steps back to learn it (a strategy's budget, the label, the cost):
    the calls made (model, retrieval, rerank, reading and tool steps) and those that failed,
    the model's calls, replies that did not parse, tokens and seconds."""

    calls: int = 0
    failed: int = 0
    errors: int = 0  # steps with an error, notes included
    parse_failures: int = 0
    model_calls: int = 0
    model_calls_unparsed: int = 0  # model calls whose reply failed to parse or errored
    retrieval_calls: int = 0
    tool_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    read_tokens: int = 0  # tokens the span reader read: no model call, but model work
    seconds: float = 0.0
    llm_seconds: float = 0.0
    cache_hits: int = 0
    parse_failures_by_role: Counter[str] = field(default_factory=Counter)

    def count(self, step: Step, sign: int = 1) -> None:
        """Add (`sign` 1) or take back (-1) one step's part."""
        llm = step.kind == "llm"
        self.calls += sign * (step.kind in CALLS)
        self.failed += sign * (step.kind in CALLS and bool(step.error))
        self.errors += sign * bool(step.error)
        self.parse_failures += sign * step.parse_failures
        if step.parse_failures:
            self.parse_failures_by_role[step.role] += sign * step.parse_failures
            self.parse_failures_by_role += Counter()  # drops the roles back at zero
        self.model_calls += sign * llm
        self.model_calls_unparsed += sign * (llm and bool(step.parse_failures or step.error))
        self.retrieval_calls += sign * (step.kind == "retrieve")
        self.tool_calls += sign * (step.kind == "tool")
        self.prompt_tokens += sign * step.prompt_tokens * llm
        self.completion_tokens += sign * step.completion_tokens * llm
        self.read_tokens += sign * step.prompt_tokens * (step.kind == "read")
        self.seconds += sign * step.seconds
        self.llm_seconds += sign * step.seconds * llm
        self.cache_hits += sign * (llm and step.cached)

    def totals(self) -> dict[str, Any]:
        """The cost of the answer as eval rows, the page and the API report it."""
        return {
            "llm_calls": self.model_calls,
            "retrieval_calls": self.retrieval_calls,
            "tool_calls": self.tool_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "read_tokens": self.read_tokens,
            "seconds": round(self.seconds, 4),
            "llm_seconds": round(self.llm_seconds, 4),
            "cache_hits": self.cache_hits,
            "parse_failures": self.parse_failures,
            "errors": self.errors,
        }


@dataclass
class Trace:
    """Ordered steps of one answer, for people to see (the page, `--trace`, eval's records);
    what they came to is counted as they are added (`tally`). Safe to append to from several
    threads."""

    steps: list[Step] = field(default_factory=list)
    # called with each step as it is added (e.g. to stream it); an exception it raises stops
    # the answer at that step (how a server cancels the work of a client that went away)
    on_step: Callable[[Step], None] | None = field(default=None, repr=False, compare=False)
    # called as each model call's reply grows (to show the answer being written); like
    # `on_step`, an exception it raises stops the answer, here in the middle of a call
    on_writing: Callable[[Writing], None] | None = field(default=None, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _calls: int = field(default=0, repr=False, compare=False)
    tally: Tally = field(default_factory=Tally, repr=False, compare=False)
    # the trace this one's steps are forwarded into (an agent's, in `adaptive`): a step marked
    # failed here is counted again there too
    parent: Trace | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        for step in self.steps:  # a trace made with its steps (read back from a record)
            self.tally.count(step)

    def add(self, step: Step) -> Step:
        with self._lock:
            self.steps.append(step)
            self.tally.count(step)
        if self.on_step is not None:
            self.on_step(step)
        return step

    def put_first(self, steps: list[Step]) -> None:
        """Steps that happened before the answer's own (the model's load, in a server)."""
        with self._lock:
            self.steps[:0] = steps
            for step in steps:
                self.tally.count(step)

    def failed(self, step: Step, reason: str) -> None:
        """Mark a step already added as a reply that did not parse (found when its output was
        read after the call), counted in the tally as if it had been added so."""
        parent = self.parent
        tallies = [self.tally] + ([parent.tally] if parent is not None else [])
        with self._lock, parent._lock if parent is not None else nullcontext():
            for tally in tallies:
                tally.count(step, -1)
            step.parse_failures += 1
            step.error = reason
            step.meta["event"] = "parse_failure"
            for tally in tallies:
                tally.count(step)

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
        return self.tally.totals()

    def parse_failures_by_role(self) -> dict[str, int]:
        return dict(self.tally.parse_failures_by_role)

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
