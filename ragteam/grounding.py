"""How well an answer is grounded, from its citations and its trace: what the page's answer
card, `ragteam ask` and the API say beside every answer, so that a cited answer never looks the
same as one the model wrote after empty searches, or after every step failed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from ragteam.trace import Step

Level = Literal["cited", "uncited", "no_evidence", "failed"]


@dataclass(frozen=True)
class Grounding:
    level: Level
    message: str
    citations: int
    passages_read: int  # passages the retrieval steps returned
    empty_searches: int
    parse_failures: int
    failed_steps: int
    steps: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def grounding(text: str, citations: int, steps: Sequence[Step]) -> Grounding:
    """The grounding of an answer `text` with `citations` citations and these trace steps
    (`Answer.grounding()` is the usual entry)."""
    searches = [s for s in steps if s.kind == "retrieve"]
    hits = [_count(s.output) for s in searches]
    calls = [s for s in steps if s.kind in ("llm", "tool", "retrieve", "rerank")]
    failed = sum(1 for s in calls if s.error)
    facts = {
        "citations": citations,
        "passages_read": sum(hits),
        "empty_searches": sum(1 for n in hits if n == 0),
        "parse_failures": sum(s.parse_failures for s in steps),
        "failed_steps": failed,
        "steps": len(calls),
    }
    level, message = _judge(text, facts)
    return Grounding(level, message, **facts)


def _judge(text: str, facts: dict[str, int]) -> tuple[Level, str]:
    if not text.strip() or (facts["steps"] and facts["failed_steps"] == facts["steps"]):
        return "failed", "every step failed: this is not an answer"
    if facts["citations"]:
        n = facts["citations"]
        return "cited", f"grounded: cites {n} passage{'s' if n != 1 else ''} it was shown"
    if facts["passages_read"]:
        return (
            "uncited",
            f"not cited: the team read {facts['passages_read']} passages but cited none; "
            "check the answer against them",
        )
    return "no_evidence", "no evidence found — the model answered from its own knowledge"


def _count(output: Any) -> int:
    """Passages a retrieval step returned (its output is a list of hits, or a mapping of
    query -> hits for batched searches)."""
    if isinstance(output, list):
        return len(output)
    if isinstance(output, dict):
        return sum(len(v) for v in output.values() if isinstance(v, list))
    return 0
