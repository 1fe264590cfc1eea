"""The strategy registry (`STRATEGIES`, a `plugins.Registry`): built-in strategies are
registered by import path, exactly as installed packages register theirs through the
`ragteam.strategies` entry-point group, so no strategy module is imported before it is used
and a strategy (adaptive) can use the registry without an import loop."""

from __future__ import annotations

import dataclasses
from typing import Any

from ragteam.agents.judge import ROLE_NAMES as SUPPORT_ROLES
from ragteam.errors import InputError, RagteamError, refuse_unknown
from ragteam.plugins import Registry
from ragteam.strategies.base import OPTION_BOUNDS, Strategy

# The one default of the CLI, the Python and HTTP APIs, the page, the chat API's bare model name
# and MCP: `read` (the shipped span reader over the top 5), the best measured on real documents
# (answer match 0.296 against smart's 0.106 and oner's 0.134 on 142 answerable questions over
# PDF, HTML, DOCX, PPTX and Markdown; paired +0.162 over oner) and on HotpotQA dev100 (F1 0.293
# against smart's 0.184): docs/benchmarks.md section 31. It needs no generation; the embedded
# model is loaded only if a support layer asks.
DEFAULT_STRATEGY = "read"

STRATEGIES = Registry(
    "strategy",
    "ragteam.strategies",
    {
        "nor": "ragteam.strategies.baselines:NoR",
        "oner": "ragteam.strategies.baselines:OneR",
        "ircot": "ragteam.strategies.ircot:IRCoT",
        "read": "ragteam.strategies.read:Read",
        "smart": "ragteam.smart.strategy:Smart",
        "marag": "ragteam.strategies.marag:MARAG",
        "smurfs": "ragteam.strategies.smurfs:Smurfs",
        "adaptive": "ragteam.router.strategy:Adaptive",
    },
)


DECLARED = ("name", "needs_index", "needs_model", "decides_verdicts", "roles", "run")


def strategy_class(name: str) -> type:
    """The strategy registered as `name`, once it is seen to declare what `Strategy` asks."""
    cls: type = STRATEGIES.load(name)
    missing = [fact for fact in DECLARED if not hasattr(cls, fact)]
    if missing:
        raise RagteamError(
            f"strategy '{name}' ({cls.__module__}.{cls.__qualname__}) does not declare "
            f"{', '.join(missing)}: add them as class attributes (see ragteam.strategies.base."
            "Strategy)"
        )
    return cls


def available() -> list[str]:
    return STRATEGIES.names()


def make_strategy(name: str, options: dict[str, Any] | None = None) -> Strategy:
    """Build a strategy by name; options are its dataclass fields (unknown ones are an error)."""
    cls = strategy_class(name)
    options = options or {}
    if dataclasses.is_dataclass(cls):
        declared = strategy_options(name)
        refuse_unknown(
            options,
            declared,
            lambda unknown, known: (
                f"strategy '{name}' has no option {unknown}; its options: {known}"
            ),
        )
        bounds = option_bounds(name)
        options = {
            key: convert_option(name, key, value, declared[key][0], bounds.get(key, OPTION_BOUNDS))
            for key, value in options.items()
        }
    return cls(**options)


def strategy_options(name: str) -> dict[str, tuple[str, Any]]:
    """Option name -> (type name, default) of a registered strategy."""
    cls = strategy_class(name)
    if not dataclasses.is_dataclass(cls):
        return {}
    return {
        f.name: (_type_name(f.type), f.default)
        for f in dataclasses.fields(cls)
        if f.init and f.default is not dataclasses.MISSING
    }


def _type_name(kind: Any) -> str:
    """A field's type as written (`int`, `bool | None`), whether the module that declares it
    keeps annotations as text (`from __future__ import annotations`) or as types."""
    return kind if isinstance(kind, str) else getattr(kind, "__name__", str(kind))


def option_bounds(name: str) -> dict[str, tuple[int, int]]:
    """The ranges a registered strategy's integer options declare (`strategies.base.bounded`);
    an option that declares none lies in OPTION_BOUNDS."""
    cls = strategy_class(name)
    if not dataclasses.is_dataclass(cls):
        return {}
    return {f.name: f.metadata["bounds"] for f in dataclasses.fields(cls) if "bounds" in f.metadata}


_CLIENT_KINDS = ("bool", "int", "float", "bool | None")


def client_options(name: str) -> list[str]:
    """Options an HTTP client may set: numbers and switches, and the text options a strategy
    lists in `client_text_options` (choices such as smart's `mode`). Anything else (a file
    path such as adaptive's router `state`) is the server operator's alone."""
    text = set(getattr(strategy_class(name), "client_text_options", ()))
    return sorted(
        key
        for key, (kind, _) in strategy_options(name).items()
        if kind in _CLIENT_KINDS or (kind == "str" and key in text)
    )


def strategy_roles(name: str) -> tuple[str, ...]:
    """The agent roles of a strategy; one that calls other strategies (`calls_strategies`,
    as a router does) has the roles of every strategy it can call."""
    cls = strategy_class(name)
    if getattr(cls, "calls_strategies", False):
        found = {
            r
            for other in available()
            if not getattr(strategy_class(other), "calls_strategies", False)
            for r in strategy_roles(other)
        }
        return tuple(sorted(found))
    return tuple(cls.roles)


def check_roles(names: list[str], roles: list[str]) -> None:
    """Every `--role-model` role must belong to one of the strategies that run."""
    known = {r for n in names for r in strategy_roles(n)} | set(SUPPORT_ROLES)
    wrong = sorted(set(roles) - known)
    if wrong:
        raise InputError(
            f"unknown role {', '.join(wrong)} for strategy {', '.join(names)}; "
            f"its roles: {', '.join(sorted(known)) or 'none'}"
        )


_TRUE, _FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off")


def convert_option(
    strategy: str,
    key: str,
    value: Any,
    kind: str,
    bounds: tuple[int, int] = OPTION_BOUNDS,
) -> Any:
    """Check and convert one `--opt` value to the option's declared type and range."""
    where = f"--opt {strategy}.{key}={value!r}"
    if kind.endswith(" | None"):
        if value is None or str(value).strip().lower() in ("", "none", "auto", "null"):
            return None
        kind = kind.removesuffix(" | None")
    if kind == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise InputError(f"{where}: expected true or false")
    if kind in ("int", "float"):
        try:
            number = int(value) if kind == "int" else float(value)
        except (TypeError, ValueError):
            expected = "an integer" if kind == "int" else "a number"
            raise InputError(f"{where}: expected {expected}") from None
        if isinstance(value, bool) or (kind == "int" and isinstance(value, float)):
            raise InputError(f"{where}: expected an integer")
        low, high = bounds
        if not low <= number <= high:
            raise InputError(f"{where}: must be between {low} and {high}")
        return number
    if kind == "str":
        return str(value)
    return value
