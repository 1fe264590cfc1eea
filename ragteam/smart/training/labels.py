"""`ragteam train labels smart`: the trained agent's per-label biases (multiple choice,
true/false claims) fitted on *training* rows and written beside its adapter
(`ADAPTER.labels.json`, read by `smart`: `ragteam.smart.labels`).

For every training-split generator example of a labelled format in a `train build` folder
(its short.jsonl), the prompt up to `<|Generator|>:` is read by the embedded model with the
adapter, as inference runs it (`LlamaCppModel.next_logprobs`), and the log-probability of each
label's first token is kept; `ragteam.agents.label_fit` fits the biases. A test set never
picks them."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragteam.agents.label_fit import fit_formats
from ragteam.common.atomic import write_json
from ragteam.errors import InputError
from ragteam.llm.gguf_files import gguf_fingerprint
from ragteam.smart.labels import FORMATS, calibration_path, first_token

Progress = Callable[[int, int], None]


def training_rows(data: Path, per_format: int, seed: int) -> list[dict[str, Any]]:
    """Training-split generator examples of labelled formats, with their item's gold label (a
    seeded sample of `per_format` a format)."""
    try:
        items = {}
        for line in (data / "items.jsonl").read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            if item["split"] == "train" and item["format"] in FORMATS:
                items[item["id"]] = item
        examples = [json.loads(x) for x in (data / "short.jsonl").read_text("utf-8").splitlines()]
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"{data} is not a `ragteam train build` folder ({exc})") from exc
    found: dict[str, list[dict[str, Any]]] = {fmt: [] for fmt in FORMATS}
    for ex in examples:
        item = items.get(ex["id"].rsplit("/", 1)[0])
        if ex.get("role") != "generator" or item is None:
            continue
        fmt, labels = item["format"], item.get("labels")
        if labels is None:
            raise InputError(
                f"{data} was built before its items named their labels; build it again with "
                "`ragteam train build`"
            )
        gold = item["answers"][0]
        if gold in labels:
            prompt = ex["text"][: ex["prompt_chars"]]
            found[fmt].append({"prompt": prompt, "format": fmt, "labels": labels, "gold": gold})
    rng = random.Random(seed)
    return [r for rows in found.values() for r in rng.sample(rows, min(per_format, len(rows)))]


def score(model: Any, rows: list[dict[str, Any]], progress: Progress | None = None) -> None:
    """Adds each row's label log-probabilities where the generator's answer starts."""
    for n, row in enumerate(rows, start=1):
        logp = model.next_logprobs(row["prompt"])
        row["logp"] = {lab: float(logp[first_token(model.tokenize, lab)]) for lab in row["labels"]}
        if progress is not None:
            progress(n, len(rows))


def fit_smart_labels(
    model: Any,
    adapter: Path,
    data: Path,
    per_format: int = 400,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Fit the biases of `model` (the embedded model with `adapter`) on `data`'s training rows
    and write them beside the adapter; returns what was written."""
    rows = training_rows(data, per_format, seed)
    if not rows:
        raise InputError(f"{data} holds no training generator rows of a labelled format")
    score(model, rows, progress)
    biases, report = fit_formats(rows, FORMATS, seed)
    written = {
        "adapter": gguf_fingerprint(adapter),
        "biases": biases,
        "fitted_on": {"data": str(data), "seed": seed, **report},
    }
    write_json(calibration_path(adapter), written)
    return written
