"""`ragteam router ...` and `ragteam feedback`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragteam.commands.common import friendly_errors, out
from ragteam.errors import InputError
from ragteam.router.state import default_state_path

router_app = typer.Typer(no_args_is_help=True, help="Train, evaluate and reproduce the AQA router.")

LogOpt = Annotated[list[Path], typer.Option("--log", help="AQA *_complete.jsonl log(s)")]
RunsOpt = Annotated[list[Path], typer.Option("--runs", help="ragteam eval run directories")]
AgentsOpt = Annotated[str, typer.Option(help="comma-separated agents (strategies)")]


def _questions(logs: list[Path], runs: list[Path], agents: list[str] | None):
    from ragteam.router.table import from_aqa_log, from_runs

    if bool(logs) == bool(runs):
        raise InputError("give either --log FILE(s) or --runs DIR(s)")
    if logs:
        return [q for log in logs for q in from_aqa_log(log)]
    return from_runs(runs, agents)


@router_app.command("train")
def train_command(
    out_path: Annotated[Path | None, typer.Option("--out", help="state file to write")] = None,
    log: LogOpt = [],  # noqa: B006
    runs: RunsOpt = [],  # noqa: B006
    agents: AgentsOpt = "nor,oner,ircot",
    features: Annotated[str, typer.Option(help="onehot (oracle label) | question")] = ("question"),
    pca_dims: Annotated[int, typer.Option(help="MiniLM dims for question features")] = 4,
    reward: Annotated[str, typer.Option(help="f1 | paper | authors")] = "authors",
    cost: Annotated[str, typer.Option(help="log_ms | seconds | tokens | calls")] = "log_ms",
    beta: float = 0.5,
    epochs: int = 50,
    alpha: float = 2.0,
    seed: int = 42,
    tie_break: Annotated[str, typer.Option(help="lexicographic|cheapest|confidence")] = (
        "lexicographic"
    ),
) -> None:
    """Train a LinUCB router on logged outcomes and save its state."""
    from ragteam.router.features import OneHot, QuestionFeatures
    from ragteam.router.rewards import Reward
    from ragteam.router.simulate import Setup, train
    from ragteam.router.state import RouterState, save_state

    with friendly_errors():
        names = [a.strip() for a in agents.split(",") if a.strip()]
        questions = _questions(log, runs, names)
        if features not in ("onehot", "question"):
            raise InputError(f"unknown --features {features}; use onehot or question")
        feats = OneHot() if features == "onehot" else QuestionFeatures(pca_dims).fit(questions)
        from ragteam.router.table import run_options

        arm_options = {n: o for n, o in run_options(runs).items() if n in names} if runs else {}
        setup = Setup(
            tuple(names),
            Reward(reward, beta, cost),  # type: ignore[arg-type]
            epochs,
            alpha,
            seed,
            tie_break,  # type: ignore[arg-type]
            agent_options=arm_options,
        )
        router = train(questions, feats, setup)
        out_path = out_path or default_state_path()
        save_state(out_path, RouterState.from_router(router))
        out.print(
            f"trained on {len(questions)} questions, {len(router.actions)} actions; "
            f"state in {out_path}"
        )


@router_app.command("evaluate")
def evaluate_command(
    state: Annotated[Path | None, typer.Option(help="router state")] = None,
    log: LogOpt = [],  # noqa: B006
    runs: RunsOpt = [],  # noqa: B006
) -> None:
    """F1 and cost of the router's choices on held-out logged questions."""
    from ragteam.router.simulate import evaluate
    from ragteam.router.state import load_state

    with friendly_errors():
        router = load_state(state or default_state_path()).router()
        ev = evaluate(router, _questions(log, runs, list(router.setup.agents)))
        out.print(f"n={ev.n}  F1 {ev.f1:.4f}  cost {ev.cost:.3f}")
        for label, (n, f1, c) in ev.by_label.items():
            picks = ", ".join(f"{k} x{v}" for k, v in ev.choices[label].items())
            out.print(f"  {label}: n={n} F1 {f1:.4f} cost {c:.3f}  chose {picks}")


@router_app.command("reproduce-aqa")
def reproduce_command(
    data: Annotated[Path, typer.Option(help="folder with the AQA logs")],
    seed: int = 42,
    seeds: Annotated[int, typer.Option(help="also report the spread over seeds 0..N-1")] = 20,
) -> None:
    """Recompute the AQA paper's Tables 1 and 2 from its logs, next to the paper's values."""
    from ragteam.router.reproduce import render_reproduction, reproduce, seed_spread

    with friendly_errors():
        out.print(
            render_reproduction(reproduce(data, seed=seed)),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        if seeds:
            out.print(
                "\n" + seed_spread(data, range(seeds)),
                markup=False,
                highlight=False,
                soft_wrap=True,
            )


def feedback_command(
    question_id: Annotated[str, typer.Argument(help="the feedback id `ask` printed")],
    correct: Annotated[bool, typer.Option("--correct", help="the answer was right")] = False,
    wrong: Annotated[bool, typer.Option("--wrong", help="the answer was wrong")] = False,
    answer: Annotated[str | None, typer.Option(help="the right answer")] = None,
    state: Annotated[Path | None, typer.Option(help="router state")] = None,
) -> None:
    """Tell the adaptive router how an answer went; it learns from the reward."""
    from ragteam.router.online import give_feedback

    with friendly_errors():
        if sum([correct, wrong, answer is not None]) != 1:
            raise InputError("give exactly one of --correct, --wrong, --answer TEXT")
        reward = give_feedback(
            state or default_state_path(),
            question_id,
            correct=correct if not answer else None,
            gold=answer,
        )
        out.print(f"router updated with reward {reward:.4f}")
