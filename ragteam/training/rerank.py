"""Train the block reranker (`ragteam/retrieval/rerank.py`) on the `<retrieval>` blocks of a
`train build` folder: the same blocks inference shows, with the gold judgements.

Each block is one listwise example: a softmax over its passages' scores is pulled towards a
target that puts most weight on the passages that are relevant *and* hold the answer (the
agent answers from the first passage), less on relevant ones without it, none on the rest.
Blocks with no relevant passage, and rows without gold evidence, teach nothing and are skipped.
The held-out split of the build stays held out; the epoch kept is the one with the lowest
validation loss."""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragteam.atomic import write_json
from ragteam.errors import InputError
from ragteam.metrics import match, normalize_answer
from ragteam.retrieval.rerank import ScoringModel
from ragteam.training.data import YES_NO
from ragteam.training.reorder import item_from_dict

ANSWER_WEIGHT, RELEVANT_WEIGHT = 1.0, 0.3


@dataclass(frozen=True)
class Block:
    question: str
    texts: list[str]  # "title. text" as the reranker reads a passage
    target: list[float]  # sums to 1
    answer_at: list[bool]  # relevant and holding an answer string
    split: str


@dataclass(frozen=True)
class RerankSettings:
    epochs: float = 2.0
    lr: float = 3e-5
    head_lr: float = 1e-3
    layers: int = 2  # top encoder layers trained; the rest stay as installed
    blocks_per_step: int = 4
    seed: int = 0
    threads: int | None = None


def holds_answer(text: str, answers: list[str]) -> bool:
    """A span answer (not yes/no) occurs in the text as whole words: the metric `match`."""
    spans = [a for a in answers if normalize_answer(a) not in YES_NO]
    return match(text, spans) > 0


def blocks_from_build(folder: Path) -> list[Block]:
    path = folder / "items.jsonl"
    if not path.is_file():
        raise InputError(f"{folder} is no `ragteam train build` folder (no items.jsonl)")
    blocks = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            item = item_from_dict(json.loads(line))
            if item.label_source != "gold":
                continue
            t = item.trajectory
            relevant = {j.index for j in t.judgements if j.relevant}
            texts = [f"{title}. {text}" if title else text for title, text in t.passages]
            answer_at = [
                n in relevant and holds_answer(text, list(item.answers))
                for n, text in enumerate(texts, 1)
            ]
            weights = [
                ANSWER_WEIGHT if answer_at[n - 1] else RELEVANT_WEIGHT if n in relevant else 0.0
                for n in range(1, len(texts) + 1)
            ]
            if sum(weights) == 0:
                continue
            target = [w / sum(weights) for w in weights]
            blocks.append(Block(item.posed or item.question, texts, target, answer_at, item.split))
    return blocks


def _loss(model: ScoringModel, block: Block) -> Any:
    import torch

    scores = model.forward(model.batch(block.question, block.texts))
    target = torch.tensor(block.target)
    return -(target * torch.log_softmax(scores, dim=0)).sum(), scores


def evaluate(model: ScoringModel, blocks: list[Block]) -> dict[str, float]:
    """Mean listwise loss, and how often the top passage is relevant / holds the answer, in
    retrieval order and in the model's order."""
    import torch

    total, top_rel, top_ans, first_rel, first_ans, with_answer = 0.0, 0, 0, 0, 0, 0
    with torch.inference_mode():
        for b in blocks:
            loss, scores = _loss(model, b)
            total += float(loss)
            best = int(torch.argmax(scores))
            top_rel += b.target[best] > 0
            first_rel += b.target[0] > 0
            if any(b.answer_at):
                with_answer += 1
                top_ans += b.answer_at[best]
                first_ans += b.answer_at[0]
    n = max(1, len(blocks))
    return {
        "loss": total / n,
        "blocks": len(blocks),
        "first_relevant_retrieval": first_rel / n,
        "first_relevant_reranked": top_rel / n,
        "blocks_with_answer": with_answer,
        "first_answer_retrieval": first_ans / max(1, with_answer),
        "first_answer_reranked": top_ans / max(1, with_answer),
    }


def train_reranker(
    data: Path,
    out: Path,
    settings: RerankSettings,
    report: Callable[[str], None] = lambda _: None,
    on_step: Callable[[int, int, float], None] = lambda *_: None,
) -> dict[str, Any]:
    """Train, keep the epoch with the lowest validation loss as `out` (.safetensors + .json);
    `report` gets each validation as a JSON line, `on_step` (step, steps, loss) each step."""
    import torch
    from safetensors.torch import save_file

    blocks = blocks_from_build(data)
    train = [b for b in blocks if b.split == "train"]
    held = [b for b in blocks if b.split == "validation"]
    if not train or not held:
        raise InputError(
            f"{data}: need training and validation blocks (got {len(train)}, {len(held)})"
        )
    torch.manual_seed(settings.seed)
    rng = random.Random(settings.seed)
    model = ScoringModel(settings.threads)
    optimizer = _optimizer(model, settings)
    history = [{"epoch": 0.0, **evaluate(model, held)}]
    report(json.dumps(history[-1]))
    best = history[0]["loss"]
    save = _saver(model, settings.layers, out, save_file)
    save()
    steps = math.ceil(len(train) * settings.epochs / settings.blocks_per_step)
    order: list[Block] = []
    started, epoch_steps = time.monotonic(), math.ceil(len(train) / settings.blocks_per_step)
    for step in range(1, steps + 1):
        model.encoder.train()
        if len(order) < settings.blocks_per_step:
            order += rng.sample(train, len(train))
        batch, order = order[: settings.blocks_per_step], order[settings.blocks_per_step :]
        loss = sum(_loss(model, b)[0] for b in batch) / len(batch)
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
            if row["loss"] < best:
                best = row["loss"]
                save()
    record = {
        "settings": asdict(settings),
        "data": str(data),
        "train_blocks": len(train),
        "validation_blocks": len(held),
        "history": history,
        "chosen": min(history, key=lambda r: r["loss"]),
    }
    write_json(out.with_suffix(".json"), record)
    return record


def _optimizer(model: ScoringModel, settings: RerankSettings) -> Any:
    return top_layers_optimizer(model, settings.layers, settings.lr, settings.head_lr)


def top_layers_optimizer(model: Any, layers: int, lr: float, head_lr: float) -> Any:
    """AdamW over the top `layers` encoder layers and the head of a MiniLM + head model (the
    reranker, the support checker); the rest frozen."""
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


def _saver(model: ScoringModel, layers: int, out: Path, save_file: Any) -> Callable[[], None]:
    """Writes the changed tensors (fp16) aside, then renames: a kill never leaves half a file."""
    import torch

    def save() -> None:
        tensors = {
            k: v.detach().to(dtype=torch.float16).contiguous()
            for k, v in model.changed_state(layers).items()
        }
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = out.with_name(out.name + ".tmp")
        save_file(
            tensors, str(staging), metadata={"format": "ragteam-rerank-v1", "layers": str(layers)}
        )
        staging.replace(out)

    return save
