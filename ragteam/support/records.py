"""The support stage's records: the settings a check runs with, and what it found for each
sentence of an answer (an `Answer` carries one `Support`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The support layer used when none is named: CLI, Python and HTTP APIs, chat API and MCP.
DEFAULT_SUPPORT_LAYER = "reader"  # docs/benchmarks.md §30: AUROC 0.80/0.90 vs lexical 0.61/0.73


@dataclass(frozen=True)
class SupportSettings:
    # lexical: content words found in the passage (the default: it measured better than the
    # checker trained so far, docs/benchmarks.md section 25); checker: a trained MiniLM checker
    # (`ragteam train support`), the lexical layer when it cannot load (said in the trace); llm:
    # a model judges each sentence against its closest passages (`ragteam.agents.judge`)
    layer: str = DEFAULT_SUPPORT_LAYER  # a name in `ragteam.support.layers.layer_names()`
    checker_path: str = ""  # the checker file (.safetensors) for layer "checker"
    abstain: bool = False  # answer "not found in your documents" when nothing supports it


@dataclass(frozen=True)
class SentenceSupport:
    text: str
    start: int
    end: int
    score: float  # the best passage's score (probability for the checker, share for lexical)
    passages: tuple[str, ...]  # ids of the passages that support it, best first
    supported: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "score": round(self.score, 4),
            "passages": list(self.passages),
            "supported": self.supported,
        }


@dataclass(frozen=True)
class Support:
    layer: str  # checker | lexical | llm | off
    threshold: float
    sentences: tuple[SentenceSupport, ...] = ()
    read: tuple[str, ...] = ()  # ids of every passage checked
    note: str = ""  # why the layer is not the one asked for, or what was left unchecked
    extra: dict[str, Any] = field(default_factory=dict)
    # the answer nothing supports was withheld (`abstain`): its sentences stay on this record
    # and in the trace, never shown as the answer's
    withheld: bool = False
    # the text the sentences' offsets index ("": the answer's own), or what a label stands
    # for (a chosen option's text): the marks know where they go without asking the choices
    checked: str = ""

    @property
    def score(self) -> float:
        """The answer's support: its least supported sentence (0 with nothing to check)."""
        return min((s.score for s in self.sentences), default=0.0)

    @property
    def cited(self) -> list[str]:
        """Supporting passage ids in the order the answer first uses them."""
        out: list[str] = []
        for s in self.sentences:
            out += [p for p in s.passages if p not in out]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "threshold": self.threshold,
            "score": round(self.score, 4),
            "sentences": [s.to_dict() for s in self.sentences],
            "read": list(self.read),
            "note": self.note,
            "withheld": self.withheld,
        }
