"""The shipped SMART agent: a LoRA adapter (package data) that turns the embedded SmolLM2-135M
into one model playing SMART's four roles, and the choice `smart mode=auto` makes with it.

`auto` runs the trained agent when the model is the embedded base (the adapter was trained on
exactly that GGUF), a model already carrying an adapter (`--lora`), or a `trajectory` role model;
any other model runs the modular four-prompt version. A missing adapter (package data stripped)
falls back to modular mode, and the trace says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ragteam.common.once import loaded_once
from ragteam.data import SMART_ADAPTER, shipped
from ragteam.llm.base import ChatModel

ADAPTER_NAME = SMART_ADAPTER


def shipped_adapter() -> Path | None:
    """The adapter file in the installed package, or None when it is not there."""
    return shipped(ADAPTER_NAME)


@dataclass(frozen=True)
class Choice:
    mode: str  # trajectory | modular
    model: ChatModel | None  # the model playing the trajectory (None: modular)
    why: str
    adapter: str = ""  # the adapter file applied, if any


def _inner(model: ChatModel) -> ChatModel:
    return getattr(model, "inner", model)


def _is_embedded_base(model: ChatModel) -> bool:
    from ragteam.llm.llamacpp import LlamaCppModel, embedded_model_path

    inner = _inner(model)
    return (
        isinstance(inner, LlamaCppModel)
        and inner.lora is None
        and inner.path.resolve() == embedded_model_path().resolve()
    )


def adapter_of(model: ChatModel) -> Path | None:
    """The LoRA adapter an in-process model carries (None for any other model)."""
    return getattr(_inner(model), "lora", None)


def choose(model: ChatModel, trajectory_model: ChatModel | None) -> Choice:
    """What `mode=auto` runs for these models (`trajectory_model`: a `--role-model
    trajectory=...` override)."""
    if trajectory_model is not None:
        adapter = adapter_of(trajectory_model)
        return Choice(
            "trajectory",
            trajectory_model,
            "a trajectory role model was given",
            adapter.name if adapter else "",
        )
    adapter = adapter_of(model)
    if adapter is not None:
        return Choice("trajectory", model, "the model carries a LoRA adapter", adapter.name)
    if not _is_embedded_base(model):
        return Choice("modular", None, "the model is not the embedded base")
    shipped = shipped_adapter()
    if shipped is None:
        return Choice(
            "modular",
            None,
            f"the shipped adapter ({ADAPTER_NAME}) is missing from the package: reinstall "
            "ragteam to get the trained agent",
        )
    return Choice(
        "trajectory", trained_model(model, shipped), "the shipped trained agent", shipped.name
    )


def trained_model(base: ChatModel, adapter: Path) -> ChatModel:
    """The embedded base with `adapter` applied, with the base's context, threads and cache
    (its identity includes the adapter, so no cache entry is shared with the base)."""
    from ragteam.llm.cache import CachedModel

    inner = _inner(base)
    cache = base.path if isinstance(base, CachedModel) else None
    return _load_trained(
        str(adapter),
        inner.context_length,
        getattr(inner, "n_threads", None),
        getattr(inner, "speedups", True),
        str(cache) if cache else None,
        getattr(inner, "merge_lora", True),
    )


@loaded_once(maxsize=4)
def _load_trained(
    adapter: str,
    n_ctx: int,
    threads: int | None,
    speedups: bool,
    cache: str | None,
    merge: bool = True,
) -> ChatModel:
    from ragteam.llm.cache import CachedModel
    from ragteam.llm.llamacpp import LlamaCppModel

    model = LlamaCppModel(
        None, n_ctx=n_ctx, n_threads=threads, speedups=speedups, lora=adapter, merge_lora=merge
    )
    return CachedModel(model, Path(cache)) if cache else model
