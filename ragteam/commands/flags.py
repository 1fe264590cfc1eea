"""Flags generated, not restated: `with_settings(param, SettingsClass)` gives a command the
flags of the class's fields marked with `ragteam.settings.flag` (their help, bounds and
defaults) and hands it one built instance; `add_flags` is the signature surgery behind it and
behind `with_model_options`."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from ragteam.commands.common import friendly_errors
from ragteam.errors import InputError
from ragteam.settings import Flag, joined, names

F = TypeVar("F", bound=Callable[..., Any])
FlagSpec = tuple[str, Any, Any]  # (parameter name, Annotated type, default)


def add_flags(
    command: F, param: str, flags: list[FlagSpec], build: Callable[[dict[str, Any]], Any]
) -> F:
    """`command` with `flags` added to its signature (typer reads them from there); the command
    itself is handed `param=build(values of those flags)` instead."""
    signature = inspect.signature(command)
    if param not in signature.parameters:
        raise TypeError(f"{command.__name__} must take a `{param}` parameter")
    resolved = typing.get_type_hints(command, include_extras=True)  # typer reads real types
    kept = [
        p.replace(annotation=resolved.get(p.name, p.annotation))
        for p in signature.parameters.values()
        if p.name != param
    ]
    clash = {p.name for p in kept} & {name for name, _, _ in flags}
    if clash:
        raise TypeError(f"{command.__name__}: {', '.join(sorted(clash))} would be given twice")
    added = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind)
        for name, kind, default in flags
    ]
    own = [name for name, _, _ in flags]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name) for name in own}
        with friendly_errors():
            built = build(values)
        return command(*args, **{param: built}, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=[*kept, *added])  # type: ignore[attr-defined]
    hints = {k: v for k, v in resolved.items() if k != param}
    hints.update({name: kind for name, kind, _ in flags})
    wrapper.__annotations__ = hints
    return wrapper  # type: ignore[return-value]


@dataclasses.dataclass(frozen=True)
class _Leaf:
    """One flag of a settings tree: the field names from the top class down, and its field."""

    path: tuple[str, ...]
    field: dataclasses.Field[Any]
    kind: Any

    @property
    def param(self) -> str:
        """Its parameter: the field's name at the top, the flag's own name in a group (so that
        `--index-type` is `index_type`, not `kind`)."""
        marked: Flag = self.field.metadata["flag"]
        if len(self.path) == 1 or not marked.name:
            return self.field.name
        return marked.name.split("/")[0].removeprefix("--").replace("-", "_")


def _leaves(cls: type, path: tuple[str, ...] = ()) -> list[_Leaf]:
    """The flagged fields of `cls` and of the groups it holds, in order."""
    hints = typing.get_type_hints(cls)
    found: list[_Leaf] = []
    for f in dataclasses.fields(cls):
        if "group" in f.metadata:
            found += _leaves(hints[f.name], (*path, f.name))
        elif "flag" in f.metadata:
            found.append(_Leaf((*path, f.name), f, hints[f.name]))
    return found


def with_settings(
    param: str, settings: Any, only: Callable[[dataclasses.Field[Any]], bool] | None = None
) -> Callable[[F], F]:
    """Give a command the flags of the flagged fields of `settings` (a settings dataclass, or
    an instance of one whose values are the flags' defaults), and of the settings it holds as
    groups (`ragteam.settings.group`), or of those `only` keeps; it is handed `param=` the
    instance the flags build (an invalid combination is the class's own `InputError`, shown
    as a message)."""
    cls = settings if isinstance(settings, type) else type(settings)
    base = None if isinstance(settings, type) else settings
    leaves = [leaf for leaf in _leaves(cls) if only is None or only(leaf.field)]
    readers = {leaf.param: _reader(leaf.field.metadata["flag"], leaf.kind) for leaf in leaves}
    specs = [_spec(leaf, base) for leaf in leaves]
    paths = {leaf.param: leaf.path for leaf in leaves}

    def build(values: dict[str, Any]) -> Any:
        read = {paths[name]: readers[name](value) for name, value in values.items()}
        try:
            return _made(cls, base, (), read)
        except ValueError as exc:
            raise InputError(str(exc)) from exc

    return lambda command: add_flags(command, param, specs, build)


def _made(cls: type, base: Any, path: tuple[str, ...], read: dict[tuple[str, ...], Any]) -> Any:
    """`cls` (or `base` with changes) with the values `read` by path, groups built inside out;
    a group's `make` builds it from its values by field name."""
    hints = typing.get_type_hints(cls)
    given: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        where = (*path, f.name)
        if "group" in f.metadata:
            inner = getattr(base, f.name) if base is not None else None
            if any(key[: len(where)] == where for key in read):
                given[f.name] = _group(f, hints[f.name], inner, where, read)
        elif where in read:
            given[f.name] = read[where]
    return dataclasses.replace(base, **given) if base is not None else cls(**given)


def _group(
    f: dataclasses.Field[Any], kind: type, inner: Any, where: tuple[str, ...], read: Any
) -> Any:
    make = f.metadata["group"].make
    if make is None:
        return _made(kind, inner, where, read)
    own = {key[-1]: value for key, value in read.items() if key[:-1] == where}
    return make(own)


def _reader(marked: Flag, kind: Any) -> Callable[[Any], Any]:
    if marked.parse is not None:
        return marked.parse
    if typing.get_origin(kind) is tuple:
        return names
    return lambda value: value


def _spec(leaf: _Leaf, base: Any) -> FlagSpec:
    field, kind = leaf.field, leaf.kind
    marked: Flag = field.metadata["flag"]
    if base is not None:
        default = functools.reduce(getattr, leaf.path, base)
    elif field.default is not dataclasses.MISSING:
        default = field.default
    else:
        default = field.default_factory()  # type: ignore[misc]
    default = default if marked.cli_default is None else marked.cli_default
    textual = marked.parse is not None or typing.get_origin(kind) is tuple
    flag_type: Any = kind
    if marked.kind is not None:
        flag_type = marked.kind
    elif marked.many:
        flag_type = list[str]
        default = []
    elif textual:
        flag_type = str
        default = default if isinstance(default, str) else (marked.show or joined)(default)
    bounds = {k: v for k, v in (("min", marked.min), ("max", marked.max)) if v is not None}
    spelled = [marked.name, *marked.aliases] if marked.name else list(marked.aliases)
    option = typer.Option(*spelled, help=marked.help, **bounds)
    return leaf.param, Annotated[flag_type, option], default
