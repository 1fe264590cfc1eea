"""`ragteam train labels`: the shipped label-bias files, fitted on training rows through the
model's public log-probabilities (`LlamaCppModel.next_logprobs`): `smart` (beside the trained
agent's adapter) and `answerer` (`oner`'s, in the package's data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ragteam.commands.common import LoggedProgress, friendly_errors, out
from ragteam.errors import InputError

labels_app = typer.Typer(
    no_args_is_help=True,
    help="Fit per-label biases (true/false, multiple choice) on training rows.",
)
Seed = Annotated[int, typer.Option(help="the rows' sample")]
Threads = Annotated[int, typer.Option(min=0, max=1024, help="CPU threads (0: all)")]


def _fitted(label: str, fit: Any) -> dict[str, Any]:
    """`fit(progress)` under a progress bar; errors as messages."""
    bar = LoggedProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        label=label,
    )
    with friendly_errors(), bar:
        task = bar.add_task("scoring rows", total=None)
        written: dict[str, Any] = fit(lambda n, total: bar.update(task, completed=n, total=total))
    return written


def _said(path: Path, written: dict[str, Any]) -> None:
    report = {k: v for k, v in written.items() if k != "fitted_on"}
    out.print(f"wrote {path}")
    out.print_json(json.dumps({**report, "fitted_on": written["fitted_on"]}))


@labels_app.command("smart")
def smart_labels(
    data: Annotated[Path, typer.Option(help="a `ragteam train build` folder (training rows)")],
    adapter: Annotated[
        Path | None, typer.Option(help="the agent's GGUF adapter (default: the shipped one)")
    ] = None,
    per_format: Annotated[int, typer.Option(min=2, help="rows per format (seeded)")] = 400,
    seed: Seed = 0,
    threads: Threads = 0,
) -> None:
    """The trained agent's biases, written beside its adapter (ADAPTER.labels.json): each
    training generator prompt read with the adapter as inference runs it, each label's first
    token's log-probability kept; a format's biases kept only where a two-fold estimate beats
    the uncalibrated accuracy."""
    from ragteam.llm import ModelOptions, load_model
    from ragteam.smart.agent import shipped_adapter
    from ragteam.smart.labels import calibration_path
    from ragteam.smart.training.labels import fit_smart_labels

    with friendly_errors():
        chosen = adapter or shipped_adapter()
        if chosen is None or not chosen.is_file():
            raise InputError("name the agent's adapter with --adapter ADAPTER.gguf")
        options = ModelOptions(n_ctx=4096, n_threads=threads or None, lora=chosen, cache=False)
        model = load_model("embedded", options)
    written = _fitted(
        "labels", lambda progress: fit_smart_labels(model, chosen, data, per_format, seed, progress)
    )
    _said(calibration_path(chosen), written)


@labels_app.command("answerer")
def answerer_labels(
    data: Annotated[
        Path, typer.Option(help="the formats training folder (as shared/data/train/formats)")
    ],
    index_dir: Annotated[
        Path, typer.Option("--index", help="an index of that folder's formats_corpus.jsonl")
    ],
    out_file: Annotated[
        Path | None,
        typer.Option("--out", help="the file to write (default: the package's answerer file)"),
    ] = None,
    per_format: Annotated[int, typer.Option(min=2, help="rows per format (seeded)")] = 500,
    seed: Seed = 0,
    threads: Threads = 0,
) -> None:
    """`oner`'s answerer biases on the embedded model: each training row asked as `oner` asks
    it, up to the answerer's call, whose reply's first token is read for each label."""
    from ragteam.llm import ModelOptions, load_model
    from ragteam.retrieval.index import load_index
    from ragteam.strategies.answer_labels import DATA_FILE
    from ragteam.strategies.training.answer_labels import fit_answerer_labels

    target = out_file or DATA_FILE
    with friendly_errors():
        index = load_index(index_dir)
        model = load_model("embedded", ModelOptions(n_threads=threads or None, cache=False))
    written = _fitted(
        "labels",
        lambda progress: fit_answerer_labels(
            model, index, data, target, per_format, seed, progress
        ),
    )
    _said(target, written)
