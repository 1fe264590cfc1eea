"""An agent role, declared once: its name (the trace's role and the `--role-model` key), its
prompt (package data) and the slots that prompt has, the reply it must give (a JSON schema, or
plain text up to a stop string) and its token budget. A role is played through a strategy's
`Context` (as the `Players` it needs), named once per call: `ROLE.call(ctx, **fields)` for a
JSON reply, `ROLE.write(ctx, **fields)` for plain text. Each renders the prompt, calls the
role's model (a `--role-model` override, else the default), validates the reply (retrying once
with the error shown) and records the trace step.

A variant of a role (another prompt or schema, the same name and model) is
`dataclasses.replace(ROLE, prompt=...)`; its slots are checked again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ragteam.errors import RagteamError
from ragteam.llm.base import ChatModel, Completion, Message, Request
from ragteam.llm.calls import Check, complete_json, complete_text
from ragteam.llm.fit import fit_text
from ragteam.prompts import fill, load_prompt, parse_template, template_slots
from ragteam.trace import AnswerView, Trace


class Players(Protocol):
    """What a role needs of a strategy's context (`ragteam.strategies.base.Context`): who
    plays each role, and the trace and settings of the answer they play in."""

    @property
    def trace(self) -> Trace: ...

    @property
    def instructions(self) -> str: ...  # the asker's own (a chat's system message), or ""

    @property
    def temperature(self) -> float: ...  # the asker's, for the roles that write the answer

    @property
    def applied(self) -> set[str]: ...  # what was done with those two ("instructions", ...)

    def model_for(self, role: str) -> ChatModel: ...


INSTRUCTION_TOKENS = 200  # the most of an asker's instructions a role's prompt takes


@dataclass(frozen=True)
class Solo:
    """A context in which one model plays every role (a teacher writing training data)."""

    model: ChatModel
    trace: Trace
    instructions: str = ""
    temperature: float = 0.0
    applied: set[str] = field(default_factory=set)

    def model_for(self, role: str) -> ChatModel:
        return self.model


@dataclass(frozen=True)
class Role:
    name: str
    # a template name under ragteam/prompts/, or the template itself: turns opened by
    # `### system|user|assistant` lines, `{name}` slots (a plugin's role brings its own)
    prompt: str
    schema: dict[str, Any] | None = None  # the JSON reply; None: a plain-text reply
    max_tokens: int = 256
    # a reply must not copy the prompt's worked examples (small models do when they cannot read
    # the input); off for roles that answer from the model's own knowledge, like their example
    grounded: bool = True
    stop: tuple[str, ...] = ()  # plain-text replies end here
    # what of the reply is the answer so far (`ragteam.agents.views`), for the roles that write
    # a strategy's answer: a person sees it being written
    view: AnswerView | None = None
    # the prompt's `{slot}`s, each filled on every call: a prompt whose slots differ is refused
    # here, when the role is declared, and a call that misses one or adds another is refused
    slots: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        found = template_slots(self._turns())
        if found != frozenset(self.slots):
            raise RagteamError(_slot_problem(self.name, "its prompt has", found, self.slots))

    def _turns(self) -> tuple[tuple[str, str], ...]:
        if self.prompt.lstrip().startswith("### "):
            return parse_template(self.prompt)
        return load_prompt(self.prompt)

    def messages(self, **fields: str) -> list[Message]:
        """The prompt with every slot filled from `fields` (exactly the declared slots)."""
        if set(fields) != set(self.slots):
            raise RagteamError(_slot_problem(self.name, "the call fills", set(fields), self.slots))
        return fill(self._turns(), **fields)

    def asked(self, ctx: Players, **fields: str) -> list[Message]:
        """`messages`, and for a role that writes the answer (one with a `view`) the asker's
        own instructions (`ctx.instructions`) added to its system turn, said in the trace."""
        messages = self.messages(**fields)
        extra = ctx.instructions.strip() if self.view is not None else ""
        if not extra:
            return messages
        extra, cut = fit_text(self.model(ctx), extra, INSTRUCTION_TOKENS)
        ctx.trace.note(
            self.name,
            f"the asker's instructions were added to the {self.name}'s"
            + (f" (cut to {INSTRUCTION_TOKENS} tokens)" if cut else "")
            + f': "{extra[:200]}"',
            event="instructions",
        )
        ctx.applied.add("instructions")
        told = f"The person asking also says how to answer: {extra}"
        if messages and messages[0]["role"] == "system":
            first = messages[0]["content"].rstrip()
            return [{"role": "system", "content": f"{first}\n\n{told}"}, *messages[1:]]
        return [{"role": "system", "content": told}, *messages]

    def model(self, ctx: Players) -> ChatModel:
        """The model playing this role (a `--role-model` override, else the default)."""
        return ctx.model_for(self.name)

    def call(
        self,
        ctx: Players,
        *,
        check: Check | None = None,
        max_tokens: int | None = None,
        **fields: str,
    ) -> Any:
        """The role's validated JSON reply to its prompt filled with `fields`; `ParseError`
        (with the failing step in the trace) when the retry fails too."""
        if self.schema is None:
            raise TypeError(f"role '{self.name}' replies in plain text: use `write`")
        return complete_json(
            self.model(ctx),
            ctx.trace,
            self.name,
            self.asked(ctx, **fields),
            self.schema,
            max_tokens=max_tokens or self.max_tokens,
            check=check,
            grounded=self.grounded,
            view=self.view,
            temperature=self.sampled_at(ctx),
        )

    def write(
        self,
        ctx: Players,
        *,
        max_tokens: int | None = None,
        logit_bias: dict[int, float] | None = None,
        **fields: str,
    ) -> Completion:
        """The role's plain-text reply (a grounded role retries once without the examples);
        `logit_bias`: token id -> bias, for the model playing the role."""
        if self.schema is not None:
            raise TypeError(f"role '{self.name}' replies in JSON: use `call`")
        request = Request(
            self.asked(ctx, **fields),
            max_tokens=max_tokens or self.max_tokens,
            stop=self.stop,
            logit_bias=logit_bias or None,
            temperature=self.sampled_at(ctx),
        )
        model = self.model(ctx)
        return complete_text(
            model, ctx.trace, self.name, request, grounded=self.grounded, view=self.view
        )

    def sampled_at(self, ctx: Players) -> float:
        """The temperature this call samples at: the asker's (`ctx.temperature`) for a role
        that writes the answer, said in the trace; 0 for every other role."""
        asked = ctx.temperature if self.view is not None else 0.0
        if asked > 0:
            ctx.trace.note(
                self.name,
                f"the {self.name} wrote at temperature {asked:g}, as asked (a sampled answer is "
                "not served from the cache)",
                event="temperature",
            )
            ctx.applied.add("temperature")
        return asked

    def prompt_tokens(self, model: ChatModel, **fields: str) -> int:
        """What the prompt costs besides the fields left empty (chat markup included)."""
        return sum(model.count_tokens(m["content"]) + 8 for m in self.messages(**fields))


def _slot_problem(
    role: str, what: str, found: set[str] | frozenset[str], declared: tuple[str, ...]
) -> str:
    missing, extra = sorted(set(declared) - set(found)), sorted(set(found) - set(declared))
    parts = [f"{what} no {{{m}}}" for m in missing] + [
        f"{what} {{{e}}}, not declared" for e in extra
    ]
    return (
        f"role '{role}': {'; '.join(parts)}; declared slots: {', '.join(declared) or 'none'} "
        "(declare each slot of the prompt in `slots=` and fill exactly those)"
    )


def role_names(*roles: Role) -> tuple[str, ...]:
    """A strategy's `roles` (the names `--role-model` accepts), from the roles it plays."""
    return tuple(dict.fromkeys(r.name for r in roles))


def object_of(required: tuple[str, ...], **properties: dict[str, Any]) -> dict[str, Any]:
    """A role's JSON schema: an object with these properties, of which `required` must be there."""
    return {"type": "object", "properties": properties, "required": list(required)}


def strings(
    min_length: int, max_length: int, max_items: int, min_items: int | None = None
) -> dict[str, Any]:
    """A JSON schema for a list of short strings (plans, intents, tasks)."""
    bounds = {"minItems": min_items} if min_items is not None else {}
    return {
        "type": "array",
        "items": {"type": "string", "minLength": min_length, "maxLength": max_length},
        **bounds,
        "maxItems": max_items,
    }
