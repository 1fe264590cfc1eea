"""How well an answer is grounded, from the support check and what the team did: what the page's
answer card, `ragteam ask`, the API, the OpenAI reply and MCP say beside every answer.

- `supported`: every sentence is backed by a passage the team read (cited inline);
- `partly_supported`: some sentences are not (they are named);
- `not_supported`: passages were read but none backs the answer: "not found in your documents";
- `no_evidence`: nothing was retrieved — the model answered from its own knowledge;
- `failed`: every step failed, or there is no answer;
- `unchecked`: support was not checked (turned off, or a true/false verdict)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Level = Literal[
    "supported", "partly_supported", "not_supported", "no_evidence", "failed", "unchecked"
]


@dataclass(frozen=True)
class Grounding:
    level: Level
    message: str
    citations: int
    passages_read: int  # different passages the retrieval steps returned, or were checked
    empty_searches: int
    parse_failures: int
    failed_steps: int
    steps: int
    score: float | None = None  # the support score (None when unchecked)
    layer: str = ""  # which layer decided: checker | lexical | off | ""
    unsupported: list[str] = field(default_factory=list)  # sentences no passage backs
    found_at: str = ""  # where the reader found an answer no check supports

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def grounding(
    text: str,
    citations: int,
    work: Any,
    support: Any = None,
    found: Any = None,
    unmentioned: tuple[str, ...] = (),
) -> Grounding:
    """The grounding of an answer `text` with `citations` citations, what its team did (a
    `types.Work`) and its support check, a `types.Support` (both typed loosely: `types`
    imports this module, not the other way round; `Answer.grounding()` is the usual entry).
    `found`: the span reader's evidence for the answer's words, when it found them
    (`Answer.found_by_reader`); `unmentioned`: names of the question no passage mentions (said
    in the message of an answer not supported)."""
    # each passage once, however many searches brought it (a label said 15 over 7 chips)
    read = set(work.passages)
    facts: dict[str, Any] = {
        "citations": citations,
        "passages_read": len(read),
        "empty_searches": work.empty_searches,
        "parse_failures": work.parse_failures,
        "failed_steps": work.failed,
        "steps": work.calls,
    }
    if support is not None and support.layer != "off":
        facts |= {
            "score": round(support.score, 4),
            "layer": support.layer,
            # a withheld answer's sentences are not the answer: none is shown as unbacked
            "unsupported": [
                s.text for s in support.sentences if not s.supported and not support.withheld
            ],
        }
        facts["passages_read"] = len(read | set(support.read))
    level, message = _judge(text, facts, support)
    unsure = level == "not_supported" and found is not None and not support.withheld
    if unsure:
        message = (
            f"found in {found.locator}, but the reader is not sure it answers the question: "
            "check it before you rely on it"
        )
        # the sentences that say the reader's words are found, not unbacked: the message says so
        facts["unsupported"] = [s for s in facts["unsupported"] if found.text not in s]
    if unmentioned and level == "not_supported":
        names = ", ".join(f"'{n}'" for n in unmentioned)
        message = f"{message} (no passage of your documents mentions {names})"
    return Grounding(level, message, **facts, found_at=found.locator if unsure else "")


def _judge(text: str, facts: dict[str, Any], support: Any) -> tuple[Level, str]:
    if not text.strip() or (facts["steps"] and facts["failed_steps"] == facts["steps"]):
        return "failed", "every step failed: this is not an answer"
    read = facts["passages_read"]
    if not read:
        return "no_evidence", "no evidence found — the model answered from its own knowledge"
    if support is None or support.layer == "off":
        return "unchecked", f"not checked: the team read {read} passage{_s(read)}"
    if support.withheld:
        return (
            "not_supported",
            f"withheld: none of the {read} passage{_s(read)} read supports an answer",
        )
    sentences = support.sentences
    missing = facts["unsupported"]
    if sentences and not missing and support.sure is False:
        n = facts["citations"]
        return (
            "partly_supported",
            f"its words stand in {n} passage{_s(n)} it read, but the span reader would not give "
            "this answer with confidence: check it before you rely on it",
        )
    if sentences and not missing:
        n = facts["citations"]
        return "supported", f"supported by {n} passage{_s(n)} it read ({support.layer} check)"
    if sentences and len(missing) < len(sentences):
        return (
            "partly_supported",
            f"partly supported: {len(missing)} of {len(sentences)} sentences are not backed by "
            "the passages read",
        )
    return (
        "not_supported",
        f"not supported by the {read} passage{_s(read)} read: not found in your documents; "
        "check it before you rely on it",
    )


def _s(n: int) -> str:
    return "" if n == 1 else "s"
