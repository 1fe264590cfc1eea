"""The trace of one answer: every LLM, retrieval and tool step, in order, with its cost."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

StepKind = Literal["llm", "retrieve", "rerank", "tool", "note", "support"]


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
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, step: Step) -> Step:
        with self._lock:
            self.steps.append(step)
        if self.on_step is not None:
            self.on_step(step)
        return step

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
