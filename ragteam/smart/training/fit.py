"""`ragteam train fit`: fine-tuning of a small causal LM on SMART trajectories, on CPU or GPU:
full fine-tuning, or a LoRA adapter (`lora_rank > 0`, peft) over the frozen base.

Curriculum as in the paper: stage 1 on short trajectories (one role per example), stage 2 on
long ones (the whole sequence). Seeded; batches of similar lengths under a token budget; one
linear schedule with warm-up over both stages; checkpoints written atomically every
`checkpoint_every` steps and resumed after a kill; a held-out validation loss after each stage.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ragteam.common import atomic
from ragteam.errors import InputError
from ragteam.smart.training.build import Example
from ragteam.smart.training.dataset import read_examples
from ragteam.smart.training.losses import (
    collate,
    collate_weights,
    role_losses,
    trained_loss,
    validation_loss,
)
from ragteam.smart.training.settings import STAGES, FitSettings
from ragteam.smart.training.tokens import Tokenized, tokenize_example


@dataclass
class StepInfo:
    step: int
    steps: int
    stage: str
    loss: float
    tokens_per_second: float


@dataclass
class FitReport:
    settings: dict[str, Any]
    examples: dict[str, int] = field(default_factory=dict)
    dropped_too_long: int = 0
    steps: int = 0
    tokens: int = 0
    trained_tokens: int = 0
    seconds: float = 0.0
    losses: list[tuple[int, float]] = field(default_factory=list)
    validation: dict[str, float] = field(default_factory=dict)
    device: str = "cpu"


def fit(
    data: Path,
    out: Path,
    settings: FitSettings,
    *,
    resume: bool = False,
    on_step: Callable[[StepInfo], None] | None = None,
    device: str = "auto",
) -> FitReport:
    """Train and save `out/model` (HF format; `out/adapter` with LoRA) and
    `out/training.json`. `device`: auto (a CUDA GPU when torch sees one, else the CPU), cpu,
    cuda or cuda:N."""
    for stage in settings.stages:  # the data is checked before the base model is loaded
        read_examples(data, stage)
    fresh = not (out / "settings.json").is_file()
    _claim_folder(out, settings, resume)
    try:
        return _fit(data, out, settings, resume, on_step, device)
    except BaseException:
        if fresh and not (out / "checkpoint").exists():
            # nothing trained yet: leave no run behind that would refuse the corrected command
            (out / "settings.json").unlink(missing_ok=True)
        raise


def _fit(
    data: Path,
    out: Path,
    settings: FitSettings,
    resume: bool,
    on_step: Callable[[StepInfo], None] | None,
    device: str,
) -> FitReport:
    import torch

    from ragteam.smart.training.base_model import load_base

    torch.manual_seed(settings.seed)
    if settings.threads:
        torch.set_num_threads(settings.threads)
    device = pick_device(device)
    model, tokenizer, bos = load_base(settings.base)
    model = _adapted(model, settings).to(device)
    plan, report = _plan(data, settings, tokenizer, bos)
    report.device = device
    total = min(len(plan), settings.max_steps) if settings.max_steps else len(plan)
    optimizer, scheduler = _optimizer(model, settings, total)
    start = _restore(out, model, optimizer, scheduler, report) if resume else 0
    if start == 0 and settings.lora_init:
        # the adapter trained on is itself a candidate: its held-out losses on this data, so
        # that the run is chosen against it on the same questions
        _validate(report, model, data, settings, tokenizer, bos, "start")
    model.train()
    began = time.perf_counter() - report.seconds
    for step in range(start, total):
        stage, batch = plan[step]
        loss, tokens, trained = _train_step(model, optimizer, scheduler, batch, tokenizer)
        report.steps, report.tokens = step + 1, report.tokens + tokens
        report.trained_tokens += trained
        report.seconds = time.perf_counter() - began
        report.losses.append((step + 1, round(loss, 4)))
        last_of_stage = step + 1 == total or plan[step + 1][0] != stage
        if last_of_stage:
            _validate(report, model, data, settings, tokenizer, bos, stage)
            model.train()
        if (step + 1) % settings.checkpoint_every == 0 or last_of_stage:
            _checkpoint(out, model, optimizer, scheduler, report)
        if on_step:  # after the checkpoint: a step reported is a step kept
            on_step(StepInfo(step + 1, total, stage, loss, report.tokens / report.seconds))
    model.eval()
    _save_model(out, model, tokenizer)
    _write_json(out / "training.json", asdict(report))
    return report


def _validate(
    report: FitReport,
    model: Any,
    data: Path,
    settings: FitSettings,
    tokenizer: Any,
    bos: int | None,
    name: str,
) -> None:
    """Held-out losses after `name` (a stage, or `start`): whole trajectories and per role."""
    report.validation[name] = validation_loss(model, data, settings.max_length, tokenizer, bos)
    report.validation.update(role_losses(model, data, settings.max_length, tokenizer, bos, name))


def _adapted(model: Any, settings: FitSettings) -> Any:
    """The model to train: itself (full fine-tuning) or the frozen base with LoRA."""
    if not settings.lora_rank:
        return model
    from ragteam.smart.training.lora import LoraSettings, with_lora

    lora = LoraSettings(
        settings.lora_rank,
        settings.lora_alpha,
        settings.lora_dropout,
        settings.lora_targets,
        settings.lora_init,
        settings.base,
    )
    return with_lora(model, lora)


def _optimizer(model: Any, settings: FitSettings, total: int) -> tuple[Any, Any]:
    """AdamW, and one linear schedule with warm-up over all `total` steps."""
    import torch

    optimizer = torch.optim.AdamW(
        _trainable(model), lr=settings.lr, weight_decay=settings.weight_decay
    )
    warm = max(1, int(total * settings.warmup))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm)))
    )
    return optimizer, scheduler


def _trainable(model: Any) -> list[Any]:
    return [p for p in model.parameters() if p.requires_grad]


def pick_device(wanted: str) -> str:
    """`auto` is the first CUDA GPU when torch sees one, else the CPU; a named one must exist."""
    import torch

    if wanted == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if wanted.startswith("cuda") and not torch.cuda.is_available():
        raise InputError(f"--device {wanted}: torch sees no CUDA GPU here; use --device cpu")
    if wanted != "cpu" and not wanted.startswith("cuda"):
        raise InputError(f"unknown --device '{wanted}'; use auto, cpu, cuda or cuda:N")
    return wanted


def _claim_folder(out: Path, settings: FitSettings, resume: bool) -> None:
    """Refuse a folder that holds another run; with `resume`, the same settings must match."""
    recorded = out / "settings.json"
    wanted = json.loads(json.dumps(asdict(settings)))
    if recorded.is_file():
        # a setting added since the run began counts as its default
        defaults = json.loads(json.dumps(asdict(FitSettings())))
        if {**defaults, **json.loads(recorded.read_text(encoding="utf-8"))} != wanted:
            raise InputError(
                f"{out} holds a training run with other settings; pick another --out "
                "(or delete it) — `--resume` continues only the same run"
            )
        if not resume and (out / "checkpoint").exists():
            raise InputError(f"{out} holds an unfinished run: add --resume to continue it")
        return
    if out.exists() and any(out.iterdir()):
        raise InputError(f"{out} is not empty and holds no training run; pick another --out")
    out.mkdir(parents=True, exist_ok=True)
    _write_json(recorded, wanted)


def _plan(
    data: Path, settings: FitSettings, tokenizer: Any, bos: int | None
) -> tuple[list[tuple[str, list[Tokenized]]], FitReport]:
    """Every optimizer step's batch, stage by stage, in a seeded order."""
    rng = random.Random(settings.seed)
    report = FitReport(settings=json.loads(json.dumps(asdict(settings))))
    plan: list[tuple[str, list[Tokenized]]] = []
    for stage in settings.stages:
        if stage not in STAGES:
            raise InputError(f"unknown stage '{stage}'; stages: {', '.join(STAGES)}")
        examples = _stage_examples(data, stage, settings, rng)
        encoded = [
            tokenize_example(tokenizer, e.text, e.prompt_chars, bos, settings.decision_weight)
            for e in examples
        ]
        kept = [t for t in encoded if len(t.input_ids) <= settings.max_length and t.trained]
        report.dropped_too_long += len(encoded) - len(kept)
        report.examples[stage] = len(kept)
        plan.extend((stage, batch) for batch in _batches(kept, settings.batch_tokens, rng))
    if not plan:
        raise InputError(f"no training examples in {data} fit --max-length {settings.max_length}")
    return plan, report


def _stage_examples(
    data: Path, stage: str, settings: FitSettings, rng: random.Random
) -> list[Example]:
    examples = [e for e in read_examples(data, stage) if e.split == "train"]
    if stage == "short":
        examples = [e for e in examples if e.role in settings.short_roles]
    whole, part = divmod(settings.epochs if stage == "short" else settings.long_epochs, 1)
    chosen = [e for _ in range(int(whole)) for e in examples]
    chosen += rng.sample(examples, round(len(examples) * part))
    return chosen


def _batches(items: list[Tokenized], budget: int, rng: random.Random) -> list[list[Tokenized]]:
    """Similar lengths together (little padding), at most `budget` padded tokens a batch,
    batches in a seeded random order."""
    ordered = sorted(items, key=lambda t: len(t.input_ids))
    batches: list[list[Tokenized]] = []
    current: list[Tokenized] = []
    for item in ordered:
        longest = max([len(item.input_ids), *(len(t.input_ids) for t in current)])
        if current and longest * (len(current) + 1) > budget:
            batches.append(current)
            current = []
        current.append(item)
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


def _train_step(
    model: Any, optimizer: Any, scheduler: Any, batch: list[Tokenized], tokenizer: Any
) -> tuple[float, int, int]:
    import torch

    ids, labels, attention = collate(batch, tokenizer.pad_token_id or 0, model.device)
    loss = trained_loss(model, ids, labels, attention, collate_weights(batch, model.device))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(_trainable(model), 1.0)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    return float(loss.item()), int(attention.sum()), sum(t.trained for t in batch)


def _checkpoint(out: Path, model: Any, optimizer: Any, scheduler: Any, report: FitReport) -> None:
    """Model, optimizer and schedule state, written aside then renamed into place."""
    import torch

    staging = out / "checkpoint.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    torch.save(
        {
            "model": _weights(model),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "torch_rng": torch.get_rng_state(),
        },
        staging / "state.pt",
    )
    _write_json(staging / "report.json", asdict(report))
    final = out / "checkpoint"
    old = out / "checkpoint.old"
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        final.rename(old)
    staging.rename(final)
    shutil.rmtree(old, ignore_errors=True)


def _restore(out: Path, model: Any, optimizer: Any, scheduler: Any, report: FitReport) -> int:
    """Load the last checkpoint (if any); returns the step to continue from."""
    import torch

    folder = out / "checkpoint"
    if not (folder / "state.pt").is_file():
        return 0
    state = torch.load(folder / "state.pt", weights_only=False, map_location=model.device)
    model.load_state_dict(state["model"], strict=not hasattr(model, "get_base_model"))
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    torch.set_rng_state(state["torch_rng"].cpu())
    saved = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    for key in ("steps", "tokens", "trained_tokens", "seconds", "losses", "validation"):
        setattr(report, key, saved[key])
    report.losses = [tuple(x) for x in report.losses]
    return int(saved["steps"])


def _weights(model: Any) -> dict[str, Any]:
    """What a checkpoint keeps: every weight, or only the adapter's under LoRA."""
    if not hasattr(model, "get_base_model"):
        return model.state_dict()
    return {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}


def trained_folder(out: Path) -> Path:
    """Where `fit` saves: `out/adapter` (LoRA) or `out/model` (full fine-tune)."""
    return out / "adapter" if (out / "adapter").is_dir() else out / "model"


def _save_model(out: Path, model: Any, tokenizer: Any) -> None:
    """The full model (`model/`) or the LoRA adapter (`adapter/`, peft's layout), swapped in."""
    name = "adapter" if hasattr(model, "get_base_model") else "model"
    staging = out / f"{name}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    model.save_pretrained(staging, safe_serialization=True)
    tokenizer.save_pretrained(staging)
    shutil.rmtree(out / name, ignore_errors=True)
    staging.rename(out / name)


def _write_json(path: Path, data: Any) -> None:
    atomic.write_json(path, data)
