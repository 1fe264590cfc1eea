"""An agent role, declared once: its name (the trace's role and the `--role-model` key), its
prompt (package data), the reply it must give (a JSON schema, or plain text up to a stop
string) and its token budget. `Role.ask` is the one way a role is played: it renders the prompt,
calls the model, validates the reply (retrying once with the error shown) and records the trace
step; `Role.call` first picks the role's model from a strategy's `Context`.

A variant of a role (another prompt or schema, the same name and model) is
`dataclasses.replace(ROLE, prompt=...)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ragteam.llm.base import ChatModel, Completion, Message, Request
from ragteam.llm.calls import Check, complete_grounded, complete_json, complete_traced
from ragteam.prompts import fill, parse_template, render
from ragteam.trace import AnswerView, Trace


class Context(Protocol):
    """What a role needs of a strategy's context (`ragteam.strategies.base.Context`)."""

    trace: Trace

    def model_for(self, role: str) -> ChatModel: ...


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

    def messages(self, **fields: str) -> list[Message]:
        """The prompt with `fields` filled in."""
        if self.prompt.lstrip().startswith("### "):
            return fill(parse_template(self.prompt), **fields)
        return render(self.prompt, **fields)

    def model(self, ctx: Context) -> ChatModel:
        """The model playing this role (a `--role-model` override, else the default)."""
        return ctx.model_for(self.name)

    def ask(
        self,
        model: ChatModel,
        trace: Trace,
        *,
        check: Check | None = None,
        max_tokens: int | None = None,
        **fields: str,
    ) -> Any:
        """The role's validated JSON reply to its prompt filled with `fields`; `ParseError`
        (with the failing step in the trace) when the retry fails too."""
        if self.schema is None:
            raise TypeError(f"role '{self.name}' replies in plain text: use `say`")
        return complete_json(
            model,
            trace,
            self.name,
            self.messages(**fields),
            self.schema,
            max_tokens=max_tokens or self.max_tokens,
            check=check,
            grounded=self.grounded,
            view=self.view,
        )

    def say(
        self, model: ChatModel, trace: Trace, *, max_tokens: int | None = None, **fields: str
    ) -> Completion:
        """The role's plain-text reply (a grounded role retries once without the examples)."""
        request = Request(
            self.messages(**fields), max_tokens=max_tokens or self.max_tokens, stop=self.stop
        )
        if self.grounded:
            return complete_grounded(model, trace, self.name, request, self.view)
        return complete_traced(model, trace, self.name, request, self.view)

    def call(self, ctx: Context, *, check: Check | None = None, **fields: str) -> Any:
        """`ask` with the role's model and the answer's trace."""
        return self.ask(self.model(ctx), ctx.trace, check=check, **fields)

    def prompt_tokens(self, model: ChatModel, **fields: str) -> int:
        """What the prompt costs besides the fields left empty (chat markup included)."""
        return sum(model.count_tokens(m["content"]) + 8 for m in self.messages(**fields))


def role_names(*roles: Role) -> tuple[str, ...]:
    """A strategy's `roles` (the names `--role-model` accepts), from the roles it plays."""
    return tuple(dict.fromkeys(r.name for r in roles))
