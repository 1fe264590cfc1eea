"""What an answer request asks besides the question, declared once: `AskRequest`'s fields.

Each field is an answer option with its help, how the command line writes it (`Flag`) and
where it is offered (`Reach`). From these fields alone come `ragteam ask`'s flags, the
run-wide flags of `ragteam eval`, `ragteam.answer`'s and `ragteam.evaluate`'s keywords, the
server's request bodies (the page's `/v1/answer`, the chat completion's `ragteam` extension)
and MCP's `ask` tool: a new option is one field here (docs/extending.md)."""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ragteam.errors import InputError
from ragteam.formats import Posed
from ragteam.settings import Flag
from ragteam.strategies.registry import DEFAULT_STRATEGY
from ragteam.support.layers import layer_names
from ragteam.support.stage import support_settings
from ragteam.types import DEFAULT_SUPPORT_LAYER, SupportSettings
from ragteam.verdict.stage import MODES, check_mode

MAX_TEMPERATURE = 2.0


@dataclass(frozen=True)
class Reach:
    """Where an answer option is offered, besides `ragteam ask` and `ragteam.answer` (always):
    `eval`: a run-wide flag of `ragteam eval` (not a question's own, such as its choices, nor
    what eval names its own way, such as several strategies); `served`: by the server and MCP
    (not a file of the caller's machine); `chat`: in the chat completion's `ragteam` extension
    (not what the chat body says its own way: the strategy is its model, the instructions its
    system message, the temperature its own field); `names`: the values it takes, named in the
    served schemas."""

    eval: bool = True
    served: bool = True
    chat: bool = True
    names: Callable[[], tuple[str, ...]] | None = None


def option(
    default: Any = dataclasses.MISSING,
    help: str = "",  # noqa: A002 - typer's word
    *,
    factory: Callable[[], Any] | None = None,
    reach: Reach | None = None,
    **flag: Any,
) -> Any:
    """An `AskRequest` field: its default (or `factory`), help, `Reach` and `Flag` settings."""
    metadata = {"flag": Flag(help, **flag), "reach": reach or Reach()}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


def key_values(pairs: list[str]) -> dict[str, Any]:
    """`--opt KEY=VALUE` options as a dict (a value read as JSON where it is JSON)."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--opt expects KEY=VALUE, got '{pair}'")
        try:
            options[key.replace("-", "_")] = json.loads(value)
        except json.JSONDecodeError:
            options[key.replace("-", "_")] = value
    return options


def labelled(given: list[str]) -> dict[str, str] | None:
    """`--choice A=text` options as {label: text}; a malformed one is an InputError."""
    choices: dict[str, str] = {}
    for item in given:
        label, sep, text = item.partition("=")
        if not sep or not label.strip() or not text.strip() or label.strip() in choices:
            raise InputError(f"--choice {item!r}: give each option once as LABEL=TEXT (A=Oslo)")
        choices[label.strip()] = text.strip()
    return choices or None


def _layers() -> tuple[str, ...]:
    return tuple(layer_names())


def _modes() -> tuple[str, ...]:
    return MODES


@dataclass(frozen=True)
class AskRequest:
    """How to answer one question: the strategy and its options, a multiple-choice or
    true/false form, how the answer's support is checked, who decides a claim, and the asker's
    own instructions and temperature. Invalid values are an InputError saying what to give."""

    strategy: str = option(
        DEFAULT_STRATEGY,
        "which agent team answers (`ragteam strategies` lists them)",
        name="--strategy",
        aliases=("-s",),
        reach=Reach(eval=False, chat=False),
    )
    options: dict[str, Any] = option(
        help="strategy option KEY=VALUE, repeatable",
        factory=dict,
        name="--opt",
        many=True,
        parse=key_values,
        reach=Reach(eval=False),
    )
    choices: dict[str, str] | None = option(
        None,
        "an option of a multiple-choice question, LABEL=TEXT (repeat it)",
        name="--choice",
        many=True,
        parse=labelled,
        reach=Reach(eval=False),
    )
    claim: bool = option(
        False, "the question is a claim: answer true or false", reach=Reach(eval=False)
    )
    support: str = option(
        DEFAULT_SUPPORT_LAYER,
        "how each sentence's support is checked: lexical (its words in a passage), reader (the "
        "span reader's reading of a passage gives it), checker (needs --checker), llm (the "
        "model judges; --role-model judge=SPEC for another), off",
        reach=Reach(names=_layers),
    )
    checker: str = option(
        "",
        "a support checker from `ragteam train support` (.safetensors)",
        reach=Reach(served=False, chat=False),
    )
    abstain: bool = option(
        False,
        'say "not found in your documents" when no passage supports the answer (a streamed '
        "reply then waits for the check)",
    )
    verdicts: str = option(
        "fitted",
        "who decides a true/false claim: fitted (the fitted verdicts over the passages the "
        "strategy read) or own (the strategy's own reply)",
        reach=Reach(names=_modes),
    )
    instructions: str = option(
        "",
        "the asker's own instructions, added to those of the roles that write the answer",
        reach=Reach(chat=False),
    )
    temperature: float = option(
        0.0,
        "sampling temperature of the roles that write the answer (0: the same answer every time)",
        min=0.0,
        max=MAX_TEMPERATURE,
        reach=Reach(chat=False),
    )

    def __post_init__(self) -> None:
        if not isinstance(self.strategy, str) or not self.strategy.strip():
            raise InputError("name a strategy (`ragteam strategies` lists them)")
        support_settings(self.support, self.abstain, self.checker)  # a layer it knows
        check_mode(self.verdicts)
        if not 0.0 <= float(self.temperature) <= MAX_TEMPERATURE:
            raise InputError(f"temperature must be a number from 0 to {MAX_TEMPERATURE:g}")
        if self.choices is not None and len(self.choices) < 2:
            raise InputError(
                "a multiple-choice question needs at least two choices (--choice LABEL=TEXT)"
            )

    def posed(self, question: str) -> Posed:
        """`question` as a strategy gets it: with this request's choices, or as a claim."""
        return Posed(question, dict(self.choices or {}), self.claim)

    @property
    def support_settings(self) -> SupportSettings:
        return support_settings(self.support, self.abstain, self.checker)

    def given(self) -> dict[str, Any]:
        """The fields that differ from their defaults (what a run records)."""
        plain = AskRequest()
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if getattr(self, f.name) != getattr(plain, f.name)
        }


def ask_fields(where: str = "") -> list[dataclasses.Field[Any]]:
    """`AskRequest`'s fields, or those offered `where` ("eval", "served" or "chat")."""
    return [
        f
        for f in dataclasses.fields(AskRequest)
        if not where or getattr(f.metadata["reach"], where)
    ]


def ask_hints() -> dict[str, Any]:
    """`AskRequest`'s field types, resolved."""
    return typing.get_type_hints(AskRequest)


def requested(request: AskRequest | None = None, **given: Any) -> AskRequest:
    """`request` (default: every option at its default) with the options `given` by name; an
    unknown name is an InputError naming the known ones."""
    names = {f.name for f in ask_fields()}
    unknown = sorted(set(given) - names)
    if unknown:
        raise InputError(
            f"unknown answer option {', '.join(unknown)}: use {', '.join(sorted(names))}"
        )
    return dataclasses.replace(request or AskRequest(), **given)
