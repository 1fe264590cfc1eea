"""Train the support checker (ragteam/support/checker.py) on pairs from the training files
(ragteam/training/support_data.py): binary cross-entropy on (claim, passage, supported?),
the top MiniLM layers and the head trained, the rest as installed. The epoch kept is the one
with the lowest validation loss; its threshold is the probability that maximises balanced
accuracy on the validation split (never on a test or dev set), written into the file."""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragteam.atomic import write_json
from ragteam.errors import InputError
from ragteam.support.checker import FORMAT, PairModel, _sigmoid
from ragteam.training.support_data import Pair, training_pairs


@dataclass(frozen=True)
class CheckerSettings:
    epochs: float = 2.0
    lr: float = 5e-5
    head_lr: float = 1e-3
    layers: int = 3  # top encoder layers trained; the rest stay as installed
    batch: int = 16
    seed: int = 0
    threads: int | None = None


def auroc(scores: Sequence[float], labels: Sequence[int]) -> float:
    """Area under the ROC curve (ties count half); 0.5 when one class is missing."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return 0.5
    ranked = sorted([(s, 1) for s in pos] + [(s, 0) for s in neg])
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        mean_rank = (i + j + 1) / 2  # ranks are 1-based
        rank_sum += mean_rank * sum(1 for k in range(i, j) if ranked[k][1])
        i = j
    return (rank_sum - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def balanced_accuracy(scores: Sequence[float], labels: Sequence[int], threshold: float) -> float:
    tp = sum(1 for s, y in zip(scores, labels, strict=True) if y and s >= threshold)
    tn = sum(1 for s, y in zip(scores, labels, strict=True) if not y and s < threshold)
    pos = sum(labels)
    neg = len(labels) - pos
    return 0.5 * (tp / max(1, pos) + tn / max(1, neg))


def best_threshold(scores: Sequence[float], labels: Sequence[int]) -> float:
    candidates = sorted({round(s, 3) for s in scores} | {0.5})
    return max(candidates, key=lambda t: (balanced_accuracy(scores, labels, t), -abs(t - 0.5)))


def predict(model: PairModel, pairs: Sequence[Pair], batch: int = 32) -> list[float]:
    import torch

    out: list[float] = []
    with torch.inference_mode():
        for start in range(0, len(pairs), batch):
            chunk = pairs[start : start + batch]
            inputs = model.batch([p.claim for p in chunk], [p.passage for p in chunk])
            logits = model.forward(inputs)
            out += [_sigmoid(float(x)) for x in logits]
    return out


def evaluate(model: PairModel, pairs: Sequence[Pair], threshold: float | None = None) -> dict:
    """Loss, AUROC, the best threshold (or the given one) and balanced accuracy at it."""
    scores = predict(model, pairs)
    labels = [p.label for p in pairs]
    eps = 1e-6
    loss = -sum(
        math.log(max(eps, s)) if y else math.log(max(eps, 1 - s))
        for s, y in zip(scores, labels, strict=True)
    ) / max(1, len(pairs))
    chosen = best_threshold(scores, labels) if threshold is None else threshold
    return {
        "pairs": len(pairs),
        "loss": round(loss, 4),
        "auroc": round(auroc(scores, labels), 4),
        "threshold": chosen,
        "balanced_accuracy": round(balanced_accuracy(scores, labels, chosen), 4),
    }


def train_checker(
    data: Path,
    out: Path,
    settings: CheckerSettings,
    report: Callable[[str], None] = lambda _: None,
    on_step: Callable[[int, int, float], None] = lambda *_: None,
) -> dict[str, Any]:
    """Train on the pairs of the training folder `data`; writes `out` (.safetensors, its card
    in the metadata) and `out` with .json (settings, data counts, history)."""
    import torch

    pairs = training_pairs(data, settings.seed)
    train = [p for p in pairs if p.split == "train"]
    held = [p for p in pairs if p.split == "validation"]
    if not train or not held:
        raise InputError(f"{data}: need training and validation pairs ({len(train)}, {len(held)})")
    torch.manual_seed(settings.seed)
    rng = random.Random(settings.seed)
    model = PairModel(settings.threads)
    optimizer = _optimizer(model, settings)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    history: list[dict[str, Any]] = []
    best: dict[str, Any] | None = None
    epoch_steps = math.ceil(len(train) / settings.batch)
    steps = math.ceil(epoch_steps * settings.epochs)
    order: list[Pair] = []
    started = time.monotonic()
    for step in range(1, steps + 1):
        model.encoder.train()
        if len(order) < settings.batch:
            order += rng.sample(train, len(train))
        chunk, order = order[: settings.batch], order[settings.batch :]
        logits = model.forward(model.batch([p.claim for p in chunk], [p.passage for p in chunk]))
        loss = loss_fn(logits, torch.tensor([float(p.label) for p in chunk]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        on_step(step, steps, float(loss.detach()))
        if step % epoch_steps == 0 or step == steps:
            model.encoder.eval()
            row = {"epoch": round(step / epoch_steps, 3), **evaluate(model, held)}
            row["seconds"] = round(time.monotonic() - started, 1)
            history.append(row)
            report(json.dumps(row))
            if best is None or row["loss"] < best["loss"]:
                best = row
                _save(model, settings.layers, out, {**row, "settings": asdict(settings)})
    assert best is not None
    record = {
        "settings": asdict(settings),
        "data": str(data),
        "pairs": {"train": len(train), "validation": len(held)},
        "sources": sorted({p.source for p in pairs}),
        "history": history,
        "chosen": best,
    }
    write_json(out.with_suffix(".json"), record)
    return record


def _optimizer(model: PairModel, settings: CheckerSettings) -> Any:
    from ragteam.training.rerank import top_layers_optimizer

    return top_layers_optimizer(model, settings.layers, settings.lr, settings.head_lr)


def _save(model: PairModel, layers: int, out: Path, card: dict[str, Any]) -> None:
    """The changed tensors (fp16) and the card, written aside then renamed."""
    import torch
    from safetensors.torch import save_file

    tensors = {
        k: v.detach().to(dtype=torch.float16).contiguous()
        for k, v in model.changed_state(layers).items()
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.with_name(out.name + ".tmp")
    meta = {"format": FORMAT, "layers": str(layers), "card": json.dumps(card)}
    save_file(tensors, str(staging), metadata=meta)
    staging.replace(out)
