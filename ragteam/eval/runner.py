"""Run strategies over a dataset into a run directory: resumable, concurrent where the backend
allows, one durable JSON line per (question, strategy)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragteam._version import __version__
from ragteam.asking import AskRequest
from ragteam.asking.posed import run_posed
from ragteam.asking.where import Loaded
from ragteam.common import metrics
from ragteam.errors import RagteamError
from ragteam.eval.datasets import Example
from ragteam.eval.row import Cost, EvalRow
from ragteam.eval.rundir import RunDir
from ragteam.retrieval.manifest import Manifest
from ragteam.strategies import make_strategy
from ragteam.trace import Trace
from ragteam.types import Answer

# (done, total, mean F1 so far, seconds per question so far)
EvalProgress = Callable[[int, int, float, float], None]


@dataclass
class EvalPlan:
    examples: list[Example]
    strategies: dict[str, dict[str, Any]]  # name -> options
    data_path: Path
    workers: int = 1
    model_settings: dict[str, Any] = field(default_factory=dict)
    # the run-wide answer options (support, abstain, verdicts, ...); each question's own
    # strategy, options, choices and claim are set per question
    asking: AskRequest = field(default_factory=AskRequest)


def _recorded(asking: AskRequest) -> dict[str, Any]:
    return {k: v for k, v in asking.given().items() if k != "verdicts"}


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_config(
    plan: EvalPlan,
    model_identity: str,
    index: dict[str, Any] | None,
    role_identities: dict[str, str] | None = None,
    tools: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Everything that makes results comparable; a resumed run must match it exactly.
    `index` is `index_config(...)` of the index used."""
    return {
        "ragteam_version": __version__,
        "data": {"path": str(plan.data_path.resolve()), "sha256": file_sha256(plan.data_path)},
        "index": index,
        "model": {"identity": model_identity, **plan.model_settings},
        "strategies": plan.strategies,
        "verdicts": plan.asking.verdicts,
        # the other answer options only when not at their defaults (older runs still resume)
        **({"asking": _recorded(plan.asking)} if _recorded(plan.asking) else {}),
        **({"tools": list(tools)} if tools else {}),
        # only when used, so that runs made before role overrides existed still resume
        **({"role_models": dict(sorted(role_identities.items()))} if role_identities else {}),
        **_agent_adapter(plan.strategies),
    }


def _agent_adapter(strategies: dict[str, Any]) -> dict[str, str]:
    """The shipped SMART adapter a `smart` run may use (mode auto): part of what the run ran."""
    if "smart" not in strategies:
        return {}
    from ragteam.data import SMART_ADAPTER, shipped
    from ragteam.llm.gguf_files import gguf_fingerprint

    adapter = shipped(SMART_ADAPTER)
    return {"smart_adapter": gguf_fingerprint(adapter) if adapter else "none"}


def index_config(directory: Path, manifest: Manifest) -> dict[str, Any]:
    return {
        "path": str(directory),
        "corpus_checksum": manifest.corpus_checksum,
        "retriever": manifest.retriever,
        "embedding_model": manifest.embedding_model,
    }


def score(example: Example, answer: Answer) -> dict[str, float]:
    golds = list(example.answers)
    scores = {
        "em": metrics.exact_match(answer.text, golds),
        "f1": metrics.f1_score(answer.text, golds),
        "match": metrics.match(answer.text, golds),
    }
    if example.label is not None:
        scores["choice_accuracy"] = metrics.choice_accuracy(
            answer.text, example.label, example.choices
        )
    if example.choices:  # how often the model named an option by its text, not its label
        scores["label_from_text"] = float("label_from_text" in answer.applied)
    if example.supporting_ids:
        any_of = example.evidence == "any"
        seen = list(answer.work.documents)
        scores |= metrics.retrieval_recall(seen, example.supporting_ids, any_of=any_of)
        shown = answer.work.shown
        if shown is not None:  # what the reading model was shown, where a strategy records it
            got = metrics.retrieval_recall(list(shown), example.supporting_ids, any_of=any_of)
            scores |= {
                "shown_all": got["retrieval_all"],
                "shown_fraction": got["retrieval_fraction"],
            }
        cited = [c.doc_id or c.passage_id for c in answer.citations]
        scores |= metrics.citation_scores(cited, example.supporting_ids, any_of=any_of)
    return scores


def evaluate_one(
    example: Example,
    strategy: str,
    options: dict[str, Any],
    loaded: Loaded,
    *,
    asking: AskRequest | None = None,
) -> EvalRow:
    """Answer and score one question as `asking` says (its run-wide options; the strategy,
    its options and the question's choices or claim set here); a failure is recorded in the
    row, not raised."""
    trace = Trace()
    started = time.perf_counter()
    error = None
    claim = example.choices is None and (example.label or "").lower() in ("true", "false")
    try:
        request = replace(
            asking or AskRequest(),
            strategy=strategy,
            options=options,
            choices=example.choices,
            claim=claim,
        )
        context = loaded.context(request, trace)
        result = run_posed(make_strategy(strategy, options), example.question, context, request)
    except RagteamError as exc:
        error = f"{type(exc).__name__}: {exc}"
        result = Answer(example.question, "", strategy, [], trace)
    return EvalRow(
        id=example.id,
        strategy=strategy,
        question=example.question,
        prediction=result.text,
        answers=list(example.answers),
        type=example.type,
        metrics=score(example, result),
        cost=Cost.from_totals(trace.totals()),
        wall_seconds=round(time.perf_counter() - started, 4),
        citations=[c.to_dict() for c in result.citations],
        grounding=result.grounding().level,
        support_score=round(result.support.score, 4) if result.support else None,
        parse_failures_by_role=trace.parse_failures_by_role(),
        error=error,
        trace=trace.to_dict(),
    )


class RunTally:
    """The single writer of a run: appends each finished row (fsynced by `RunDir`) and
    reports progress."""

    def __init__(
        self, run: RunDir, already: int, total: int, progress: EvalProgress | None
    ) -> None:
        self.run, self.total = run, total
        self.rows: list[EvalRow] = []
        self._finished, self._f1, self._progress = already, 0.0, progress
        self._started = time.perf_counter()

    def add(self, row: EvalRow) -> None:
        self.run.append(row)
        self.rows.append(row)
        self._finished += 1
        self._f1 += row.metrics["f1"]
        if self._progress:
            elapsed = time.perf_counter() - self._started
            n = len(self.rows)
            self._progress(self._finished, self.total, self._f1 / n, elapsed / n)


def pending_pairs(plan: EvalPlan, run: RunDir) -> tuple[set, list[tuple[Example, str]]]:
    """Pairs already in the run, and the (question, strategy) pairs still to do."""
    done = run.done()
    todo = [
        (ex, name) for ex in plan.examples for name in plan.strategies if (ex.id, name) not in done
    ]
    return done, todo


def run_eval(
    plan: EvalPlan,
    run: RunDir,
    loaded: Loaded,
    progress: EvalProgress | None = None,
) -> list[EvalRow]:
    """Evaluate every (question, strategy) pair not yet in `run` with what `loaded` holds
    (the model, the index, role models and tools); returns the new rows."""
    model, index = loaded.model, loaded.index
    for name, options in plan.strategies.items():
        make_strategy(name, options)  # unknown names or options fail before any work
    roles = {role: m.identity for role, m in loaded.role_models.items()}
    info = None if index is None else index_config(index.directory, index.manifest)
    run.open(run_config(plan, model.identity, info, roles, tuple(t.name for t in loaded.tools)))
    done, todo = pending_pairs(plan, run)
    workers = max(1, plan.workers) if model.parallel else 1
    tally = RunTally(run, len(done), len(done) + len(todo), progress)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: set[Future] = set()
        queue = iter(todo)
        try:
            while True:
                while len(pending) < workers and (item := next(queue, None)) is not None:
                    ex, name = item
                    pending.add(
                        pool.submit(
                            evaluate_one,
                            ex,
                            name,
                            plan.strategies[name],
                            loaded,
                            asking=plan.asking,
                        )
                    )
                if not pending:
                    break
                complete, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in complete:
                    tally.add(future.result())
        except BaseException:
            for future in pending:
                future.cancel()
            raise
    return tally.rows
