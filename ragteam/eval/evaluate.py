"""`ragteam.evaluate`: the library call behind `ragteam eval`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ragteam.asking import AskRequest, ask_fields, requested
from ragteam.asking.where import Where
from ragteam.errors import InputError
from ragteam.eval.datasets import load_dataset
from ragteam.eval.row import EvalRow
from ragteam.eval.rundir import RunDir
from ragteam.eval.runner import EvalPlan, EvalProgress, run_eval
from ragteam.llm import DEFAULT_MODEL, ModelOptions
from ragteam.llm.base import ChatModel
from ragteam.retrieval.index import Index
from ragteam.strategies import DEFAULT_STRATEGY, check_roles
from ragteam.tools.base import Tool


def evaluate(
    data: str | Path,
    out: str | Path,
    *,
    strategies: str | list[str] | dict[str, dict[str, Any]] = DEFAULT_STRATEGY,
    index: str | Path | Index | None = None,
    model: str | ChatModel | None = None,
    model_options: ModelOptions | None = None,
    role_models: dict[str, str | ChatModel] | None = None,
    limit: int | None = None,
    workers: int = 4,
    tools: Iterable[Tool | Callable[..., Any]] = (),
    progress: EvalProgress | None = None,
    ray: str | None = None,
    ray_actors: int = 0,
    ray_cpus_per_actor: float = 1.0,
    asking: AskRequest | None = None,
    **asked: Any,
) -> list[EvalRow]:
    """Answer and score every question of `data` (JSONL) with each strategy into the run
    folder `out`; calling it again resumes (rows already written are kept, failed ones are
    retried). `strategies` are names ("oner,smart" or a list) or name -> options (default: the
    default strategy, as `ragteam ask` answers). Returns the
    rows written by this call. With `ray` (a cluster address, or "auto") the questions are
    answered by Ray actors (`model`, `role_models` and `index` must then be names/paths).
    The run-wide answer options are an `AskRequest` (`asking`) or its options by name (`asked`,
    over `asking`): `support`, `checker`, `abstain`, `verdicts` (who decides a true/false claim:
    "fitted", the fitted verdicts over the passages the strategy read, or "own", the
    strategy's reply), `instructions`, `temperature`; each question's strategy, options and
    choices or claim are its own."""
    run_wide = asking_for_eval(asking, asked)
    chosen = chosen_strategies(strategies)
    check_roles(list(chosen), list(role_models or {}))
    options = model_options or ModelOptions()
    plan = EvalPlan(
        examples=load_dataset(Path(data))[:limit],
        strategies=chosen,
        data_path=Path(data),
        workers=workers,
        model_settings={"n_ctx": options.n_ctx},
        asking=run_wide,
    )
    if ray:
        if tools:
            raise InputError("--ray does not ship Python tools to actors yet; run tools locally")
        return _on_ray(
            plan,
            Path(out),
            ray,
            model,
            options,
            index,
            role_models or {},
            ray_actors,
            ray_cpus_per_actor,
            progress,
        )
    loaded = Where(index, model, options, role_models or {}, tuple(tools)).load()
    return run_eval(plan, RunDir(Path(out)), loaded, progress)


def chosen_strategies(
    strategies: str | list[str] | dict[str, dict[str, Any]],
) -> dict[str, dict[str, Any]]:
    """Strategy names ("oner,smart" or a list) or name -> options, as name -> options."""
    if isinstance(strategies, dict):
        return dict(strategies)
    names = strategies.split(",") if isinstance(strategies, str) else strategies
    return {name.strip(): {} for name in names if name.strip()}


def asking_for_eval(asking: AskRequest | None, asked: dict[str, Any]) -> AskRequest:
    """The run-wide options: those a question or `strategies` sets are refused here."""
    own = sorted(set(asked) - {f.name for f in ask_fields("eval")})
    if own and all(name in {f.name for f in ask_fields()} for name in own):
        raise InputError(
            f"{', '.join(own)}: each question or strategy sets its own in eval "
            "(strategies=... names the strategies and their options)"
        )
    return requested(asking, **asked)


def _on_ray(
    plan: EvalPlan,
    out: Path,
    address: str,
    model: str | ChatModel | None,
    options: ModelOptions,
    index: str | Path | Index | None,
    role_models: dict[str, str | ChatModel],
    actors: int,
    cpus: float,
    progress: EvalProgress | None,
) -> list[EvalRow]:
    from ragteam.eval.ray_eval import run_eval_ray

    if not (model is None or isinstance(model, str)) or isinstance(index, Index):
        raise InputError("with ray, pass the model as a spec and the index as a directory")
    if any(not isinstance(spec, str) for spec in role_models.values()):
        raise InputError("with ray, pass role models as specs")
    return run_eval_ray(
        plan,
        RunDir(out),
        address=address,
        model_spec=model or DEFAULT_MODEL,
        model_options=options,
        index_dir=Path(index).expanduser().resolve() if index is not None else None,
        role_specs={role: str(spec) for role, spec in role_models.items()},
        actors=actors,
        cpus_per_actor=cpus,
        progress=progress,
    )
