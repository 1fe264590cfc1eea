"""Train the block reranker (`ragteam/smart/rerank.py`) on the `<retrieval>` blocks of a
`train build` folder: the same blocks inference shows, with the gold judgements.

Each block is one listwise example: a softmax over its passages' scores is pulled towards a
target that puts most weight on the passages that are relevant *and* hold the answer (the
agent answers from the first passage), less on relevant ones without it, none on the rest.
Blocks with no relevant passage, and rows without gold evidence, teach nothing and are skipped.
The held-out split of the build stays held out; the epoch kept is the one with the lowest
validation loss."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragteam.common.atomic import write_json
from ragteam.common.metrics import match, normalize_answer
from ragteam.errors import InputError
from ragteam.minilm.cross_encoder import CrossEncoder
from ragteam.minilm.settings import RERANK, TopLayersSettings
from ragteam.minilm.top_layers import Loop, save_changed, top_layers_optimizer, train_top_layers
from ragteam.smart.rerank import scoring_model
from ragteam.smart.training.data import YES_NO
from ragteam.smart.training.reorder import item_from_dict

ANSWER_WEIGHT, RELEVANT_WEIGHT = 1.0, 0.3


@dataclass(frozen=True)
class Block:
    question: str
    texts: list[str]  # "title. text" as the reranker reads a passage
    target: list[float]  # sums to 1
    answer_at: list[bool]  # relevant and holding an answer string
    split: str


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


def _loss(model: CrossEncoder, block: Block) -> Any:
    import torch

    scores = model.forward(model.batch([block.question] * len(block.texts), block.texts))
    target = torch.tensor(block.target)
    return -(target * torch.log_softmax(scores, dim=0)).sum(), scores


def evaluate(model: CrossEncoder, blocks: list[Block]) -> dict[str, float]:
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
    settings: TopLayersSettings = RERANK,
    report: Callable[[str], None] = lambda _: None,
    on_step: Callable[[int, int, float], None] = lambda *_: None,
) -> dict[str, Any]:
    """Train, keep the epoch with the lowest validation loss as `out` (.safetensors + .json);
    `report` gets each validation as a JSON line, `on_step` (step, steps, loss) each step."""
    import torch

    blocks = blocks_from_build(data)
    train = [b for b in blocks if b.split == "train"]
    held = [b for b in blocks if b.split == "validation"]
    if not train or not held:
        raise InputError(
            f"{data}: need training and validation blocks (got {len(train)}, {len(held)})"
        )
    torch.manual_seed(settings.seed)
    model = scoring_model(settings.threads or None)
    optimizer = top_layers_optimizer(model, settings.layers, settings.lr, settings.head_lr)
    baseline = {"epoch": 0.0, **evaluate(model, held)}
    report(json.dumps(baseline))
    meta = {"format": "ragteam-rerank-v1", "layers": str(settings.layers)}
    save_changed(model, settings.layers, out, meta)
    loop = Loop(
        settings,
        train,
        held,
        loss=lambda batch: sum(_loss(model, b)[0] for b in batch) / len(batch),
        validate=lambda blocks: evaluate(model, list(blocks)),
        report=report,
        on_step=on_step,
    )
    keep = lambda _row: save_changed(model, settings.layers, out, meta)  # noqa: E731
    history = [baseline, *train_top_layers(model, optimizer, loop, keep, baseline["loss"])]
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
