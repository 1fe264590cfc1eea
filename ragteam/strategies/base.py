"""What every strategy gets and gives, and the helpers they share."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from ragteam.agents.role import INSTRUCTION_TOKENS
from ragteam.errors import InputError
from ragteam.formats import Posed
from ragteam.llm.base import ChatModel
from ragteam.llm.fit import fit_text
from ragteam.reader.answer import Readers
from ragteam.retrieval.index import Index
from ragteam.tools.base import Tool
from ragteam.trace import Trace
from ragteam.types import Answer, Citation, Passage, Retrieved

OPTION_BOUNDS = (0, 100_000)  # an integer option's range when it declares none


def bounded(default: int, low: int, high: int) -> int:
    """A strategy's integer option that declares its range (`--opt` values outside it are
    refused): `k: int = bounded(5, 1, 100)`."""
    return field(default=default, metadata={"bounds": (low, high)})


@dataclass
class Context:
    """The resources of one answer: the model, the index (None for no retrieval), the trace,
    the passages its retrievals handed the team (`retrieved`, what support checks) and its
    span readers (`readers`)."""

    model: ChatModel
    index: Index | None
    trace: Trace
    role_models: dict[str, ChatModel] = field(default_factory=dict)
    tools: tuple[Tool, ...] = ()  # the user's tools (functions, MCP), for tool-using strategies
    retrieved: Retrieved = field(default_factory=Retrieved)
    # the asker's own instructions (a chat's system message): the roles that write the answer
    # add them to theirs (`ragteam.agents.role.Role.asked`)
    instructions: str = ""
    # the asker's sampling temperature for those roles (0: the same answer every time, and
    # served from the cache)
    temperature: float = 0.0
    # the span readers of this answer: every stage that reads takes its reader here
    readers: Readers = field(default_factory=Readers)
    # what the stages did with the asker's settings (`Answer.applied`), added as they do it
    applied: set[str] = field(default_factory=set)

    def model_for(self, role: str) -> ChatModel:
        """The model that plays `role` (a per-role override, else the default model)."""
        return self.role_models.get(role, self.model)

    def require_index(self, strategy: str) -> Index:
        return require_index(strategy, self.index)


def require_index(strategy: str, index: Index | None) -> Index:
    """The one check that a strategy which retrieves was given an index."""
    if index is None:
        raise InputError(f"strategy '{strategy}' retrieves: pass an index (--index DIR)")
    return index


class Strategy(Protocol):
    """What a strategy declares of itself (checked when it is loaded: `registry.declared`),
    and its one method."""

    name: ClassVar[str]
    needs_index: ClassVar[bool]
    # whether it asks a chat model; False (`read`): the model is loaded only if a layer asks
    needs_model: ClassVar[bool]
    # whether its true/false verdicts are its own (else the fitted verdicts decide a claim)
    decides_verdicts: ClassVar[bool]
    roles: ClassVar[tuple[str, ...]]  # agent roles whose model `--role-model ROLE=...` can set

    def run(self, posed: Posed, ctx: Context) -> Answer: ...


QUESTION_SHARE = 0.25  # of the context window, at most, for the question


def fit_question(
    ctx: Context,
    question: str,
    share: float = QUESTION_SHARE,
    roles: tuple[str, ...] = (),
    *,
    model: ChatModel | None = None,
) -> str:
    """Fit the question into `share` of the smallest context window among the models playing
    `roles` (the default model without roles; `model` when the caller has it); a cut is
    noted in the trace."""
    if model is None:
        models = [ctx.model_for(r) for r in roles] or [ctx.model]
        model = min(models, key=lambda m: m.context_length)
    budget = int(model.context_length * share)
    fitted, cut = fit_text(model, question, budget)
    if cut:
        ctx.trace.note(
            "budget",
            f"question cut from {model.count_tokens(question)} to at most {budget} tokens "
            "to fit the context window (beginning and end kept)",
            original_chars=len(question),
            kept_chars=len(fitted),
        )
    return fitted


def fit_passages(
    ctx: Context,
    passages: list[Passage],
    budget: int,
    role: str | None = None,
    *,
    model: ChatModel | None = None,
) -> list[Passage]:
    """Trim passages so that together they fit `budget` tokens, counted by the model playing
    `role` (or `model`); later (lower-ranked) passages are dropped before earlier ones are
    cut below a fair share."""
    if not passages:
        return []
    if model is None:
        model = ctx.model_for(role) if role else ctx.model
    if ctx.instructions.strip():  # what the roles that write the answer add (Role.asked)
        budget -= INSTRUCTION_TOKENS + 16
    share = max(32, budget // len(passages))
    kept: list[Passage] = []
    used = 0
    for p in passages:
        room = min(share, budget - used)
        if room < 16:
            break
        text, _cut = fit_text(model, p.text, room - 8)
        kept.append(dataclasses.replace(p, text=text))
        used += model.count_tokens(text) + 8
    trimmed = any(a.text != b.text for a, b in zip(kept, passages, strict=False))
    if len(kept) < len(passages) or trimmed:
        ctx.trace.note(
            "budget",
            f"passages trimmed to fit {budget} tokens: kept {len(kept)} of {len(passages)}",
        )
    return kept


def format_passages(passages: list[Passage]) -> str:
    return "\n".join(f"[{i}] {p.title}: {p.text}" for i, p in enumerate(passages, start=1))


def cite(passages: list[Passage], answer: str) -> list[Citation]:
    """Cite the shown passages that contain the answer; if none does, every shown passage;
    no answer cites nothing."""
    needle = answer.lower().strip()
    if not needle:
        return []
    support = [p for p in passages if needle and needle in p.text.lower()]
    return [Citation.of(p) for p in (support or passages)]
