"""The progress bars of `ragteam train`'s commands, and the one that trains a MiniLM
cross-encoder's top layers (`train rerank`, `train support`, `train yesno`) under one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ragteam.commands.common import LoggedProgress, friendly_errors, out
from ragteam.minilm.settings import TopLayersSettings

StepSink = Callable[[int, int, float], None]  # (step, steps, loss)


def progress_bar(label: str) -> LoggedProgress:
    return LoggedProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        label=label,
    )


TopLayersTrainer = Callable[[Path, Path, TopLayersSettings, Any, StepSink], dict[str, Any]]


def train_top_layers(
    label: str, train: TopLayersTrainer, data: Path, out_file: Path, settings: TopLayersSettings
) -> dict[str, Any]:
    """`train(data, out_file, settings, log, show)` under a progress bar that `show(step,
    steps, loss)` moves; errors as messages. Returns the chosen epoch's record."""
    with friendly_errors(), progress_bar(label) as shown:
        task = shown.add_task("training", total=None, info="")

        def show(step: int, steps: int, loss: float) -> None:
            shown.update(task, completed=step, total=steps, info=f"loss {loss:.3f}")

        return train(data, out_file, settings, out.print, show)["chosen"]
