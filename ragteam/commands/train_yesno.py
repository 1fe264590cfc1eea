"""`ragteam train yesno`: the yes/no decider (ragteam/reader/decider.py), trained on BoolQ and
docqa-train's yes/no questions (ragteam/reader/training/yesno.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragteam.commands.common import out
from ragteam.commands.training_bars import train_top_layers
from ragteam.minilm.settings import TopLayersSettings


def yesno_command(
    people: Annotated[
        Path,
        typer.Option(
            "--people",
            help="docqa-train's folder (PART/files, PART/questions.jsonl); its validation "
            "files are never read",
        ),
    ],
    boolq: Annotated[
        Path, typer.Option("--boolq", help="BoolQ's JSONL (question, passage, answer)")
    ],
    work: Annotated[Path, typer.Option("--work", help="where each part's index is synced")],
    out_file: Annotated[Path, typer.Option("--out", help="decider to write (.safetensors)")],
    settings: TopLayersSettings,
) -> None:
    """Train the yes/no decider on BoolQ and docqa-train's yes/no questions; the epoch with
    the lowest held loss is kept."""
    from ragteam.reader.training.yesno import train_yesno

    def train(data, out_path, chosen, report, show):  # noqa: ANN001, ANN202
        return train_yesno(data, boolq, work, out_path, chosen, report, show)

    chosen = train_top_layers("train yesno", train, people, out_file, settings)
    out.print(
        f"wrote {out_file} (epoch {chosen['epoch']}: held loss {chosen['loss']:.4f}, "
        f"BoolQ {chosen['boolq_accuracy']:.3f}, docqa-train {chosen['people_accuracy']:.3f})"
    )
