"""One group of model options for every command that runs a model (`ask`, `eval`, `serve`,
`train build`): the same flags, defaults and help everywhere, resolved into `ModelOptions` once.

A command declares `model_options: ModelOptions` and is decorated with `@with_model_options`;
the decorator adds the flags below to its signature (typer reads them from there) and hands the
command the resolved options. The model spec itself stays the command's own `--model`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from ragteam.commands.flags import add_flags
from ragteam.llm import ModelOptions

F = TypeVar("F", bound=Callable[..., Any])
_DEFAULTS = ModelOptions()
ModelOpt = Annotated[
    str,
    typer.Option(help="embedded | gemma-3-270m | PATH.gguf | openai:NAME | SCHEME:NAME"),
]

_FLAGS: list[tuple[str, Any, Any]] = [
    (
        "base_url",
        Annotated[str, typer.Option(help="OpenAI-compatible model server (for openai:NAME)")],
        _DEFAULTS.base_url,
    ),
    (
        "api_key_env",
        Annotated[
            str, typer.Option(help="environment variable holding the model server's API key")
        ],
        _DEFAULTS.api_key_env,
    ),
    (
        "n_ctx",
        Annotated[
            int,
            typer.Option(min=256, max=1_048_576, help="context window of in-process GGUF models"),
        ],
        _DEFAULTS.n_ctx,
    ),
    (
        "threads",
        Annotated[
            int, typer.Option(min=0, max=1024, help="CPU threads of in-process models (0 = all)")
        ],
        0,
    ),
    (
        "timeout",
        Annotated[
            float,
            typer.Option(min=0.1, max=3600, help="seconds to wait for a model server's reply"),
        ],
        _DEFAULTS.timeout,
    ),
    (
        "retries",
        Annotated[int, typer.Option(min=0, max=20, help="retries of a failed model server call")],
        _DEFAULTS.retries,
    ),
    (
        "lora",
        Annotated[
            Path | None,
            typer.Option(help="a GGUF LoRA adapter over the in-process model (train fit --lora)"),
        ],
        None,
    ),
    (
        "merge_lora",
        Annotated[
            bool,
            typer.Option(
                "--merge-lora/--apply-lora",
                help="merge --lora into the model once (cached, faster) or apply it per token",
            ),
        ],
        _DEFAULTS.merge_lora,
    ),
    (
        "no_cache",
        Annotated[bool, typer.Option("--no-cache", help="do not use the LLM cache")],
        False,
    ),
]
NAMES = tuple(name for name, _, _ in _FLAGS)


def resolve(values: dict[str, Any]) -> ModelOptions:
    """`ModelOptions` from the group's flag values."""
    return ModelOptions(
        n_ctx=values["n_ctx"],
        n_threads=values["threads"] or None,
        base_url=values["base_url"],
        api_key_env=values["api_key_env"],
        cache=not values["no_cache"],
        timeout=values["timeout"],
        retries=values["retries"],
        lora=values["lora"],
        merge_lora=values["merge_lora"],
    )


def with_model_options(command: F) -> F:
    """Add the model-option flags to `command` and pass it `model_options`."""
    return add_flags(command, "model_options", _FLAGS, resolve)
