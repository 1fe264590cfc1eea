"""`ragteam eval --ray ADDRESS`: questions fanned out to Ray actors, one model each.

Every actor loads the model and the index once and answers (question, strategy) pairs; the
driver is the run's only writer (the same fsynced, resumable results file as a local run, the
same rows). Ctrl-C keeps what was written; the same command resumes.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragteam.asking import AskRequest
from ragteam.asking.where import Where
from ragteam.eval.datasets import Example
from ragteam.eval.row import EvalRow
from ragteam.eval.rundir import RunDir
from ragteam.eval.runner import (
    EvalPlan,
    EvalProgress,
    RunTally,
    evaluate_one,
    index_config,
    pending_pairs,
    run_config,
)
from ragteam.llm import ModelOptions
from ragteam.retrieval.index import read_manifest
from ragteam.scale.cluster import connected
from ragteam.strategies import make_strategy

IN_FLIGHT_PER_ACTOR = 2  # one answering, one queued: no actor waits on the driver


class Answerer:
    """One model and one index in one Ray actor process."""

    def __init__(
        self,
        model_spec: str,
        options: ModelOptions,
        index_dir: str | None,
        role_specs: dict[str, str],
    ) -> None:

        where = Where(index_dir or None, model_spec, options, role_specs)
        self.loaded = where.load()
        if options.n_threads and "torch" in sys.modules:  # the dense encoder, same share
            sys.modules["torch"].set_num_threads(options.n_threads)

    def identities(self) -> tuple[str, dict[str, str]]:
        roles = self.loaded.role_models
        return self.loaded.model.identity, {role: m.identity for role, m in roles.items()}

    def evaluate(
        self, example: Example, strategy: str, options: dict[str, Any], asking: AskRequest
    ) -> EvalRow:
        return evaluate_one(example, strategy, options, self.loaded, asking=asking)


def run_eval_ray(
    plan: EvalPlan,
    run: RunDir,
    *,
    address: str,
    model_spec: str,
    model_options: ModelOptions,
    index_dir: Path | None,
    role_specs: dict[str, str] | None = None,
    actors: int = 0,
    cpus_per_actor: float = 1.0,
    progress: EvalProgress | None = None,
) -> list[EvalRow]:
    """Evaluate the pairs not yet in `run` on the Ray cluster at `address`. `actors` 0: as
    many as the cluster's CPUs allow at `cpus_per_actor` each."""
    for name, options in plan.strategies.items():
        make_strategy(name, options)  # unknown names or options fail before any work
    info = None if index_dir is None else index_config(index_dir, read_manifest(index_dir))
    threads = max(1, int(cpus_per_actor))
    options = replace(model_options, n_threads=model_options.n_threads or threads)
    with connected(address) as ray:
        count = actors or max(1, int(ray.cluster_resources().get("CPU", 1) // cpus_per_actor))
        remote = ray.remote(num_cpus=cpus_per_actor)(Answerer)
        index_arg = str(index_dir) if index_dir else None
        pool = [
            remote.remote(model_spec, options, index_arg, role_specs or {}) for _ in range(count)
        ]
        identity, roles = ray.get(pool[0].identities.remote())
        run.open(run_config(plan, identity, info, roles))
        done, todo = pending_pairs(plan, run)
        tally = RunTally(run, len(done), len(done) + len(todo), progress)
        try:
            _drain(ray, pool, todo, plan, tally)
        finally:
            for actor in pool:
                ray.kill(actor)
    return tally.rows


def _drain(ray: Any, pool: list, todo: list, plan: EvalPlan, tally: RunTally) -> None:
    """Keep every actor busy; rows are written by this process as they come back."""
    queue = iter(todo)
    owner: dict[Any, Any] = {}  # object ref -> actor
    load = {id(actor): 0 for actor in pool}
    try:
        while True:
            for actor in pool:
                while load[id(actor)] < IN_FLIGHT_PER_ACTOR and (item := next(queue, None)):
                    example, name = item
                    ref = actor.evaluate.remote(example, name, plan.strategies[name], plan.asking)
                    owner[ref] = actor
                    load[id(actor)] += 1
            if not owner:
                return
            ready, _ = ray.wait(list(owner), num_returns=1)
            for ref in ready:
                load[id(owner.pop(ref))] -= 1
                tally.add(ray.get(ref))
    except BaseException:
        for ref in owner:
            ray.cancel(ref)
        raise
