"""Fine-tuning the top layers and the head of a `CrossEncoder` (the block reranker, the support
checker): one seeded loop over shuffled batches, a validation after each epoch, the weights of
the best validation loss written (fp16, aside then renamed: a kill never leaves half a file)."""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from ragteam.minilm.cross_encoder import CrossEncoder
from ragteam.minilm.settings import TopLayersSettings

T = TypeVar("T")
Row = dict[str, Any]


@dataclass(frozen=True)
class Loop(Generic[T]):
    """What one training run needs besides the model: its examples, how many a step takes, how
    a batch's loss and a validation are computed, and where each validation goes."""

    settings: TopLayersSettings  # epochs, examples a step, seed
    train: Sequence[T]
    held: Sequence[T]
    loss: Callable[[list[T]], Any]  # a batch's loss (a torch scalar)
    validate: Callable[[Sequence[T]], Row]  # must hold "loss"
    report: Callable[[str], None] = lambda _: None
    on_step: Callable[[int, int, float], None] = lambda *_: None


def top_layers_optimizer(model: CrossEncoder, layers: int, lr: float, head_lr: float) -> Any:
    """AdamW over the top `layers` encoder layers and the head; the rest frozen."""
    import torch

    top = set(model.changed_state(layers))
    for name, p in model.encoder.named_parameters():
        p.requires_grad = f"encoder.{name}" in top
    trained = [p for p in model.encoder.parameters() if p.requires_grad]
    return torch.optim.AdamW(
        [
            {"params": trained, "lr": lr},
            {"params": list(model.head.parameters()), "lr": head_lr},
        ]
    )


def save_changed(model: CrossEncoder, layers: int, out: Path, metadata: dict[str, str]) -> None:
    """The tensors training changed, in fp16, with `metadata`, written aside then renamed."""
    import torch
    from safetensors.torch import save_file

    tensors = {
        k: v.detach().to(dtype=torch.float16).contiguous()
        for k, v in model.changed_state(layers).items()
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.with_name(out.name + ".tmp")
    save_file(tensors, str(staging), metadata=metadata)
    staging.replace(out)


def train_top_layers(
    model: CrossEncoder,
    optimizer: Any,
    loop: Loop[T],
    keep: Callable[[Row], None],
    to_beat: float | None = None,
) -> list[Row]:
    """Train (the caller seeds torch before it makes the model); after each epoch (and at the
    end) validate, report the row and `keep` it when its loss is the lowest so far (and below
    `to_beat`, the untrained model's). Returns the validation rows."""
    batch = loop.settings.batch
    rng = random.Random(loop.settings.seed)
    epoch_steps = math.ceil(len(loop.train) / batch)
    steps = math.ceil(epoch_steps * loop.settings.epochs)
    history: list[Row] = []
    best = to_beat
    order: list[T] = []
    started = time.monotonic()
    for step in range(1, steps + 1):
        model.encoder.train()
        if len(order) < batch:
            order += rng.sample(list(loop.train), len(loop.train))
        chunk, order = order[:batch], order[batch:]
        loss = loop.loss(chunk)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loop.on_step(step, steps, float(loss.detach()))
        if step % epoch_steps == 0 or step == steps:
            model.encoder.eval()
            row = {"epoch": round(step / epoch_steps, 3), **loop.validate(loop.held)}
            row["seconds"] = round(time.monotonic() - started, 1)
            history.append(row)
            loop.report(json.dumps(row))
            if best is None or row["loss"] < best:
                best = row["loss"]
                keep(row)
    return history
