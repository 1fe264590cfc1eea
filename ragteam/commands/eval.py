"""`ragteam eval` and `ragteam report`."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

from ragteam.asking import AskRequest, key_values
from ragteam.asking.where import Where
from ragteam.commands.common import (
    LoggedProgress,
    McpOpt,
    ToolsOpt,
    err,
    friendly_errors,
    out,
    user_tools,
)
from ragteam.commands.flags import with_settings
from ragteam.errors import InputError
from ragteam.strategies.registry import DEFAULT_STRATEGY

if TYPE_CHECKING:
    from ragteam.eval.row import EvalRow
    from ragteam.eval.rundir import RunDir

StrategiesOpt = Annotated[
    str, typer.Option("--strategy", "-s", help="comma-separated (default: as `ask`)")
]


@with_settings("where", Where)
@with_settings("asking", AskRequest, only=lambda f: f.metadata["reach"].eval)
def eval_command(
    data: Annotated[Path, typer.Option(help="JSONL of {id, question, answers, ...}")],
    out_dir: Annotated[Path, typer.Option("--out", help="run directory (resumable)")],
    where: Where,
    asking: AskRequest,
    strategy: StrategiesOpt = DEFAULT_STRATEGY,
    limit: Annotated[int | None, typer.Option(min=1, help="first N questions only")] = None,
    workers: Annotated[
        int, typer.Option(min=1, max=256, help="parallel questions (HTTP backends)")
    ] = 4,
    opt: Annotated[list[str], typer.Option("--opt", help="STRATEGY.KEY=VALUE")] = [],  # noqa: B006
    tools: ToolsOpt = [],  # noqa: B006
    mcp: McpOpt = [],  # noqa: B006
    ray: Annotated[
        str | None, typer.Option(help="Ray cluster address (or auto): answer on its actors")
    ] = None,
    ray_actors: Annotated[int, typer.Option(min=0, help="actors (0: one per CPU share)")] = 0,
    ray_cpus: Annotated[float, typer.Option(min=0.1, help="CPUs per Ray actor")] = 1.0,
) -> None:
    """Run strategies over a dataset; rerunning the same command resumes. The answer options
    (support, abstain, verdicts, ...) hold for every question."""
    from ragteam.eval.evaluate import evaluate
    from ragteam.eval.rundir import RunDir

    with friendly_errors(), user_tools(tools, mcp, where.model_options.timeout) as extra:
        run = RunDir(out_dir)
        with _eval_bar() as report:
            try:
                rows = evaluate(
                    data,
                    out_dir,
                    strategies=strategy_options(
                        [s.strip() for s in strategy.split(",") if s.strip()], opt
                    ),
                    **replace(where, tools=tuple(extra)).given(),
                    limit=limit,
                    workers=workers,
                    progress=report,
                    ray=ray,
                    ray_actors=ray_actors,
                    ray_cpus_per_actor=ray_cpus,
                    asking=asking,
                )
            except KeyboardInterrupt:
                err.print(
                    f"interrupted: {len(run.results())} results kept in {run.results_path}; "
                    "run the same command again to resume"
                )
                raise typer.Exit(130) from None
        _finish(run, rows)


@contextlib.contextmanager
def _eval_bar() -> Iterator[Callable[[int, int, float, float], None]]:
    """A progress bar; yields what `evaluate` reports each finished question to."""
    with LoggedProgress(
        TextColumn("eval"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("F1 {task.fields[f1]:.3f}  {task.fields[spq]:.2f} s/q"),
        TimeElapsedColumn(),
        label="eval",
    ) as bar:
        task = bar.add_task("eval", total=None, f1=0.0, spq=0.0)

        def report(done: int, total: int, f1: float, spq: float) -> None:
            bar.update(task, completed=done, total=total, f1=f1, spq=spq)

        yield report


def _finish(run: RunDir, rows: list[EvalRow]) -> None:
    """Say what was written; exit 1 when nothing was evaluated or every new row failed."""
    out.print(f"{len(rows)} new results in {run.results_path}")
    failed = sum(1 for r in rows if r.error)
    if not run.results():
        err.print("error: nothing was evaluated (is the dataset empty?)")
        raise typer.Exit(1)
    if rows and failed == len(rows):
        err.print(f"error: all {failed} new results failed; see their 'error' fields")
        raise typer.Exit(1)


def report_command(
    runs: Annotated[list[Path], typer.Argument(help="run directories")],
    baseline: Annotated[str | None, typer.Option(help="strategy to compare against")] = None,
    plot_path: Annotated[Path | None, typer.Option("--plot", help="PNG to write")] = None,
    markdown: Annotated[Path | None, typer.Option("--markdown", help="also write here")] = None,
    common: Annotated[bool, typer.Option(help="only questions every strategy answered")] = False,
    metric: Annotated[
        str | None,
        typer.Option(help="the task's metric, paired first: choice_accuracy | f1 | em | match"),
    ] = None,
) -> None:
    """Tables with bootstrap CIs, a breakdown by question type, paired comparisons, a plot."""
    from ragteam.eval.report import (
        METRIC_NAMES,
        common_questions,
        load_runs,
        plot,
        render_markdown,
    )

    with friendly_errors():
        table = load_runs(runs)
        if common:
            table = common_questions(table)
        if metric is not None and metric not in METRIC_NAMES:
            raise InputError(f"--metric {metric}: one of {', '.join(METRIC_NAMES)}")
        text = render_markdown(table, baseline, metric)
        out.print(text, markup=False, highlight=False, soft_wrap=True)
        if markdown:
            markdown.parent.mkdir(parents=True, exist_ok=True)
            markdown.write_text(text + "\n", encoding="utf-8")
        if plot_path:
            out.print(f"plot written to {plot(table, plot_path)}")


def strategy_options(names: list[str], pairs: list[str]) -> dict[str, dict]:
    """`--opt oner.k=5` sets k for oner; `--opt k=5` sets it for every strategy."""
    options: dict[str, dict] = {name: {} for name in names}
    if not names:
        raise InputError("name at least one strategy with --strategy")
    for key, value in key_values(pairs).items():
        target, _, field = key.rpartition(".")
        if target and target not in options:
            raise InputError(f"--opt {key}: '{target}' is not among --strategy {','.join(names)}")
        for name in [target] if target else names:
            options[name][field] = value
    return options
