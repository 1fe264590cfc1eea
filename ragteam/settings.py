"""Which fields of a settings dataclass are command-line flags: `flag(default, help, ...)` marks
one, with its help, bounds and (where the command line writes it differently) how its text is
read. `ragteam.commands.flags` turns the marked fields into a command's flags, so a command
never lists a settings class's fields again; the library itself never imports the CLI."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Flag:
    help: str = ""
    min: float | None = None
    max: float | None = None
    # where the command line writes the value as other text than the field holds (a tuple as
    # comma-separated names, "both" for two stages): how to read that text, how to show it
    parse: Callable[[str], Any] | None = None
    show: Callable[[Any], str] | None = None
    name: str = ""  # the flag, when not --field-name
    cli_default: Any = None  # the flag's default, when not the field's
    aliases: tuple[str, ...] = ()  # more ways to write the flag ("-s")
    # a flag given once per item (`--opt K=V --opt K2=V2`): `parse` reads the list of them
    many: bool = False
    # the flag's own type, where the command line takes another than the field holds (an int
    # flag whose 0 means None): `parse` then reads the typed value
    kind: Any = None


def flag(
    default: Any,
    help: str = "",  # noqa: A002 - typer's word
    *,
    min: float | None = None,  # noqa: A002
    max: float | None = None,  # noqa: A002
    parse: Callable[[str], Any] | None = None,
    show: Callable[[Any], str] | None = None,
    name: str = "",
    cli_default: Any = None,
    aliases: tuple[str, ...] = (),
    many: bool = False,
    kind: Any = None,
    factory: Callable[[], Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> Any:
    """A dataclass field that is also a command-line flag; `factory` makes a mutable
    default (a dict, a list) instead of `default`, `meta` adds facts of the field's own (where
    a command offers it)."""
    marked = Flag(help, min, max, parse, show, name, cli_default, aliases, many, kind)
    metadata = {"flag": marked, **(meta or {})}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass(frozen=True)
class Group:
    """A field that is a settings dataclass of its own, whose flagged fields are flags of the
    command too (their names must not clash); `make` builds it from those flags' values by
    field name (default: the class itself)."""

    make: Callable[[dict[str, Any]], Any] | None = None


def group(factory: Callable[[], Any], make: Callable[[dict[str, Any]], Any] | None = None) -> Any:
    """A dataclass field holding nested settings whose flagged fields are flags as well."""
    return field(default_factory=factory, metadata={"group": Group(make)})


def names(text: str) -> tuple[str, ...]:
    """Comma-separated names as a tuple (blanks dropped)."""
    return tuple(part.strip() for part in text.split(",") if part.strip())


def joined(values: tuple[str, ...]) -> str:
    return ",".join(values)
