"""One group of model options for every command that runs a model (`ask`, `eval`, `serve`,
`train build`): the flags of `ModelOptions`' flagged fields (declared there once, with their
help, bounds and defaults), resolved into one `ModelOptions`.

A command declares `model_options: ModelOptions` and is decorated with `@with_model_options`;
the decorator adds the flags to its signature (typer reads them from there) and hands the
command the resolved options. The model spec itself stays the command's own `--model`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from ragteam.commands.flags import with_settings
from ragteam.llm import MODEL_SPECS, ModelOptions

F = TypeVar("F", bound=Callable[..., Any])
ModelOpt = Annotated[
    str,
    typer.Option(help=MODEL_SPECS),
]


def with_model_options(command: F) -> F:
    """Add the model-option flags to `command` and pass it `model_options`."""
    return with_settings("model_options", ModelOptions)(command)
