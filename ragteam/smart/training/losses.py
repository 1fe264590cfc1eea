"""Losses of `train fit`: next-token cross-entropy over the trained positions of a batch, and
the held-out validation losses a run is chosen by (whole trajectories, and per role)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragteam.smart.training.build import Example
from ragteam.smart.training.dataset import read_examples, read_items
from ragteam.smart.training.tokens import IGNORE, Tokenized, tokenize_example


def causal_lm(model: Any) -> Any:
    """The transformers model under a peft wrapper (LoRA layers inside), or the model."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def collate(batch: list[Tokenized], pad: int, device: Any = "cpu") -> tuple[Any, Any, Any]:
    import torch

    width = max(len(t.input_ids) for t in batch)
    ids = torch.full((len(batch), width), pad, dtype=torch.long)
    labels = torch.full((len(batch), width), IGNORE, dtype=torch.long)
    attention = torch.zeros((len(batch), width), dtype=torch.long)
    for row, t in enumerate(batch):
        n = len(t.input_ids)
        ids[row, :n] = torch.tensor(t.input_ids)
        labels[row, :n] = torch.tensor(t.labels)
        attention[row, :n] = 1
    return ids.to(device), labels.to(device), attention.to(device)


def collate_weights(batch: list[Tokenized], device: Any = "cpu") -> Any:
    """Per-position loss weights of a batch (padding 0), or None when every token weighs 1."""
    import torch

    if all(t.weights is None for t in batch):
        return None
    width = max(len(t.input_ids) for t in batch)
    weights = torch.zeros((len(batch), width), dtype=torch.float32)
    for row, t in enumerate(batch):
        weights[row, : len(t.input_ids)] = torch.tensor(t.weights or [1.0] * len(t.input_ids))
    return weights.to(device)


def trained_loss(model: Any, ids: Any, labels: Any, attention: Any, weights: Any = None) -> Any:
    """Next-token cross-entropy over trained positions only (with `weights`, their weighted
    mean). The output projection (a 49k vocabulary) runs on those positions alone: masked
    retrieval text costs no logits."""
    import torch

    model = causal_lm(model)
    hidden = model.model(input_ids=ids, attention_mask=attention).last_hidden_state
    targets = labels[:, 1:]
    keep = targets != IGNORE
    logits = model.lm_head(hidden[:, :-1][keep])
    if weights is None:
        return torch.nn.functional.cross_entropy(logits.float(), targets[keep])
    each = torch.nn.functional.cross_entropy(logits.float(), targets[keep], reduction="none")
    kept = weights[:, 1:][keep]
    return (each * kept).sum() / kept.sum()


def validation_loss(
    model: Any, data: Path, max_length: int, tokenizer: Any, bos: int | None
) -> float:
    """Mean loss over the held-out questions' long trajectories (token-weighted): the number a
    run is chosen by."""
    held = [e for e in read_examples(data, "long") if e.split == "validation"]
    return mean_loss(model, held, max_length, tokenizer, bos)


def role_losses(
    model: Any, data: Path, max_length: int, tokenizer: Any, bos: int | None, stage: str
) -> dict[str, float]:
    """Per role, the held-out questions' short examples (`STAGE:ROLE`): a long-trajectory loss
    alone can hide one weak role (the generator is few tokens of a trajectory). The generator's
    loss is also given per question format (`STAGE:generator@multiple_choice`) when the data
    mixes formats: a format the model cannot answer hides in the mean."""
    if not (data / "short.jsonl").is_file():
        return {}
    held = [e for e in read_examples(data, "short") if e.split == "validation"]
    losses = example_losses(model, held, max_length, tokenizer, bos)
    groups = {
        role: [e.id for e in held if e.role == role] for role in sorted({e.role for e in held})
    }
    formats = _formats(data)
    if len(set(formats.values())) > 1:
        for fmt in sorted(set(formats.values())):
            groups[f"generator@{fmt}"] = [
                i for i in groups.get("generator", []) if formats.get(i.rsplit("/", 1)[0]) == fmt
            ]
    found = {}
    for name, ids in groups.items():
        measured = [losses[i] for i in ids if i in losses]
        if measured:
            total, count = sum(m[0] for m in measured), sum(m[1] for m in measured)
            found[f"{stage}:{name}"] = round(total / count, 4)
    return found


def _formats(data: Path) -> dict[str, str]:
    """Question id -> format (open, multiple_choice, claim) of a trajectory folder's held-out
    questions; empty for folders built before formats were recorded."""
    if not (data / "items.jsonl").is_file():
        return {}
    return {
        str(item["id"]): str(item.get("format", "open"))
        for item in read_items(data)
        if item["split"] == "validation"
    }


def mean_loss(
    model: Any, held: list[Example], max_length: int, tokenizer: Any, bos: int | None
) -> float:
    """Token-weighted mean loss of `held` (NaN when none fits `max_length`)."""
    measured = example_losses(model, held, max_length, tokenizer, bos).values()
    count = sum(n for _, n in measured)
    return round(sum(total for total, _ in measured) / count, 4) if count else float("nan")


def example_losses(
    model: Any, held: list[Example], max_length: int, tokenizer: Any, bos: int | None
) -> dict[str, tuple[float, int]]:
    """Example id -> (summed loss, trained tokens), for every example that fits `max_length`."""
    import torch

    model.eval()
    found: dict[str, tuple[float, int]] = {}
    with torch.no_grad():
        for e in held:
            t = tokenize_example(tokenizer, e.text, e.prompt_chars, bos)
            if len(t.input_ids) > max_length or not t.trained:
                continue
            ids, labels, attention = collate([t], 0, model.device)
            found[e.id] = (
                float(trained_loss(model, ids, labels, attention)) * t.trained,
                t.trained,
            )
    return found
