"""`ragteam.evaluate`: the library call behind `ragteam eval`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ragteam.eval.datasets import load_dataset
from ragteam.eval.rundir import RunDir
from ragteam.eval.runner import EvalPlan, Progress, run_eval
from ragteam.llm import ModelOptions, load_model
from ragteam.llm.base import ChatModel
from ragteam.retrieval.index import Index, load_index
from ragteam.strategies import check_roles
from ragteam.tools.base import Tool, make_tool


def evaluate(
    data: str | Path,
    out: str | Path,
    *,
    strategies: str | list[str] | dict[str, dict[str, Any]] = "oner",
    index: str | Path | Index | None = None,
    model: str | ChatModel | None = None,
    model_options: ModelOptions | None = None,
    role_models: dict[str, str | ChatModel] | None = None,
    limit: int | None = None,
    workers: int = 4,
    tools: Iterable[Tool | Callable[..., Any]] = (),
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Answer and score every question of `data` (JSONL) with each strategy into the run
    folder `out`; calling it again resumes (rows already written are kept, failed ones are
    retried). `strategies` are names ("oner,smart" or a list) or name -> options. Returns the
    rows written by this call."""
    if isinstance(strategies, str):
        strategies = [s.strip() for s in strategies.split(",") if s.strip()]
    chosen = dict(strategies) if isinstance(strategies, dict) else {s: {} for s in strategies}
    check_roles(list(chosen), list(role_models or {}))
    options = model_options or ModelOptions()
    plan = EvalPlan(
        examples=load_dataset(Path(data))[:limit],
        strategies=chosen,
        data_path=Path(data),
        workers=workers,
        model_settings={"n_ctx": options.n_ctx},
        role_models={
            role: spec if not isinstance(spec, str) else load_model(spec, options)
            for role, spec in (role_models or {}).items()
        },
        tools=tuple(make_tool(t) for t in tools),
    )
    loaded = index if isinstance(index, Index) or index is None else load_index(index)
    chat = model if model is not None and not isinstance(model, str) else load_model(model, options)
    return run_eval(plan, RunDir(Path(out)), chat, loaded, progress)
