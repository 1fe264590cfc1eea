"""`ragteam train build`: training questions + an index -> a trajectory folder on disk.

The folder holds `items.jsonl` (one structured trajectory per question), `long.jsonl` and
`short.jsonl` (rendered training texts with their prompt length), `stats.json` and
`settings.json`. It is written aside and swapped in, so a killed build leaves no half folder.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ragteam.common import atomic
from ragteam.errors import InputError
from ragteam.llm.base import ChatModel
from ragteam.retrieval.index import Index
from ragteam.smart.training.build import (
    BuildSettings,
    Example,
    Item,
    Statistics,
    assign_splits,
    build_items,
    long_example,
    short_examples,
)
from ragteam.smart.training.data import TrainQuestion, check_disjoint, read_train_questions
from ragteam.smart.training.reorder import item_from_dict, shuffle_item

FILES = ("items.jsonl", "long.jsonl", "short.jsonl", "stats.json", "settings.json")


def read_all(
    paths: list[Path], exclude: list[Path], skip_unsupported: bool
) -> tuple[list[TrainQuestion], list[str], int]:
    """Questions of every file (ids unique across files), the skipped rows, and how many
    excluded (test) questions they were checked against."""
    questions: list[TrainQuestion] = []
    skipped: list[str] = []
    for path in paths:
        questions.extend(read_train_questions(path, skip_unsupported, skipped))
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise InputError(f"question id '{dup}' occurs in more than one training file")
    compared = check_disjoint(questions, exclude)
    return questions, skipped, compared


def build_dataset(
    questions: list[TrainQuestion],
    index: Index,
    out: Path,
    settings: BuildSettings,
    *,
    teacher: ChatModel | None = None,
    count_tokens: Callable[[str], int] = lambda text: len(text) // 4,
    progress: Callable[[], None] | None = None,
    extra: dict[str, Any] | None = None,
    keep_splits: Path | None = None,
) -> dict[str, Any]:
    """Build, render and write every trajectory; returns the statistics. `keep_splits`: an
    earlier trajectory folder whose questions keep their train/validation split here."""
    if out.exists() and any(out.iterdir()):
        raise InputError(f"{out} is not empty; pick a new --out or delete it first")
    items = list(build_items(questions, index, settings, teacher, progress))
    assign_splits(items, settings, read_splits(keep_splits) if keep_splits else None)
    if settings.shuffle_passages:
        items = [shuffle_item(item, settings.seed) for item in items]
    about = {"build": asdict(settings), "index": str(index.directory), **(extra or {})}
    return write_dataset(items, out, about, count_tokens)


def shuffle_dataset(
    source: Path, out: Path, seed: int, count_tokens: Callable[[str], int]
) -> dict[str, Any]:
    """A copy of the build folder `source` with every trajectory's passages in a seeded random
    order (training/reorder.py), the same questions, splits and labels; no retrieval again."""
    if out.exists() and any(out.iterdir()):
        raise InputError(f"{out} is not empty; pick a new --out or delete it first")
    items = [shuffle_item(item_from_dict(row), seed) for row in read_items(source)]
    about = json.loads((source / "settings.json").read_text(encoding="utf-8"))
    about["build"] = {**about.get("build", {}), "shuffle_passages": True, "shuffle_seed": seed}
    about["shuffled_from"] = str(source)
    return write_dataset(items, out, about, count_tokens)


def write_dataset(
    items: list[Item], out: Path, about: dict[str, Any], count_tokens: Callable[[str], int]
) -> dict[str, Any]:
    """Render the items' training texts and write the folder aside, then swap it in."""
    stats = Statistics()
    rendered: dict[str, list[Example]] = {"long": [], "short": []}
    for item in items:
        long = [] if item.answer_only else [long_example(item)]
        shorts = short_examples(item)
        rendered["long"].extend(long)
        rendered["short"].extend(shorts)
        stats.add(item, [*long, *shorts], count_tokens)
    summary = stats.to_dict()
    summary["validation_questions"] = sum(1 for i in items if i.split == "validation")
    staging = out.parent / f".{out.name}.building-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        _write_jsonl(staging / "items.jsonl", [i.to_dict() for i in items])
        for kind, examples in rendered.items():
            _write_jsonl(staging / f"{kind}.jsonl", [e.to_dict() for e in examples])
        _write_json(staging / "stats.json", summary)
        _write_json(staging / "settings.json", about)
        if out.exists():
            out.rmdir()
        staging.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return summary


def read_splits(folder: Path) -> dict[str, str]:
    """Question id -> split of a trajectory folder's `items.jsonl`."""
    return {str(item["id"]): str(item["split"]) for item in read_items(folder)}


def read_items(folder: Path) -> list[dict[str, Any]]:
    """The structured trajectories of a folder's `items.jsonl` (id, split, format, ...)."""
    path = folder / "items.jsonl"
    if not path.is_file():
        raise InputError(f"no items.jsonl in {folder}: name a `train build` folder")
    items: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                item = json.loads(line)
                if not isinstance(item, dict) or "id" not in item or "split" not in item:
                    raise ValueError("no id or split")
            except ValueError as exc:
                raise InputError(f"{path}:{number}: not a trajectory item ({exc})") from exc
            items.append(item)
    return items


def read_examples(folder: Path, kind: str) -> list[Example]:
    """The rendered examples of one kind (`long` or `short`) of a trajectory folder."""
    path = folder / f"{kind}.jsonl"
    if not path.is_file():
        raise InputError(
            f"no {path.name} in {folder}: build trajectories first with `ragteam train build`"
        )
    examples: list[Example] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                examples.append(Example(**json.loads(line)))
            except (json.JSONDecodeError, TypeError) as exc:
                raise InputError(f"{path}:{number}: not a training example ({exc})") from exc
    return examples


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    atomic.write_jsonl(path, rows)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    atomic.write_json(path, data)
