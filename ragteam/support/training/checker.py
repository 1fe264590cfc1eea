"""Train the support checker (ragteam/support/checker.py) on pairs from the training files
(ragteam/support/training/data.py): binary cross-entropy on (claim, passage, supported?),
the top MiniLM layers and the head trained, the rest as installed. The epoch kept is the one
with the lowest validation loss; its threshold is the probability that maximises balanced
accuracy on the validation split (never on a test or dev set), written into the file."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ragteam.common.atomic import write_json
from ragteam.common.metrics import auroc
from ragteam.errors import InputError
from ragteam.minilm.cross_encoder import CrossEncoder, sigmoid
from ragteam.minilm.settings import CHECK, TopLayersSettings
from ragteam.minilm.top_layers import Loop, save_changed, top_layers_optimizer, train_top_layers
from ragteam.support.checker import FORMAT, pair_model
from ragteam.support.training.data import Pair, training_pairs


def balanced_accuracy(scores: Sequence[float], labels: Sequence[int], threshold: float) -> float:
    tp = sum(1 for s, y in zip(scores, labels, strict=True) if y and s >= threshold)
    tn = sum(1 for s, y in zip(scores, labels, strict=True) if not y and s < threshold)
    pos = sum(labels)
    neg = len(labels) - pos
    return 0.5 * (tp / max(1, pos) + tn / max(1, neg))


def best_threshold(scores: Sequence[float], labels: Sequence[int]) -> float:
    candidates = sorted({round(s, 3) for s in scores} | {0.5})
    return max(candidates, key=lambda t: (balanced_accuracy(scores, labels, t), -abs(t - 0.5)))


def predict(model: CrossEncoder, pairs: Sequence[Pair], batch: int = 32) -> list[float]:
    import torch

    out: list[float] = []
    with torch.inference_mode():
        for start in range(0, len(pairs), batch):
            chunk = pairs[start : start + batch]
            inputs = model.batch([p.claim for p in chunk], [p.passage for p in chunk])
            logits = model.forward(inputs)
            out += [sigmoid(float(x)) for x in logits]
    return out


def evaluate(model: CrossEncoder, pairs: Sequence[Pair], threshold: float | None = None) -> dict:
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
    settings: TopLayersSettings = CHECK,
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
    model = pair_model(settings.threads or None)
    optimizer = top_layers_optimizer(model, settings.layers, settings.lr, settings.head_lr)
    loss_fn = torch.nn.BCEWithLogitsLoss()

    def loss(chunk: list[Pair]) -> Any:
        logits = model.forward(model.batch([p.claim for p in chunk], [p.passage for p in chunk]))
        return loss_fn(logits, torch.tensor([float(p.label) for p in chunk]))

    chosen: list[dict[str, Any]] = []

    def keep(row: dict[str, Any]) -> None:
        chosen.append(row)
        _save(model, settings.layers, out, {**row, "settings": asdict(settings)})

    loop = Loop(
        settings,
        train,
        held,
        loss=loss,
        validate=lambda pairs: evaluate(model, pairs),
        report=report,
        on_step=on_step,
    )
    history = train_top_layers(model, optimizer, loop, keep)
    best = chosen[-1]
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


def _save(model: CrossEncoder, layers: int, out: Path, card: dict[str, Any]) -> None:
    """The changed tensors (fp16) and the card, written aside then renamed."""
    meta = {"format": FORMAT, "layers": str(layers), "card": json.dumps(card)}
    save_changed(model, layers, out, meta)
