"""`ragteam train reader`: fine-tune the span reader (`ragteam.reader`) on `reader_data` groups.

One group (a question over its passages) is one shared-normalisation loss; `accumulate` groups
make a step. Every `check_every` steps the held groups are scored (loss, exact match and F1 of
the best reading); the weights of the best validation score (`keep`: loss, or EM) are written
(fp16, aside then
renamed). A checkpoint (weights, optimizer, step, random state) is written beside `out` at the
same time, so a killed run resumes where it stopped with the same settings."""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ragteam.errors import InputError
from ragteam.reader.model import EXTRAS, LINE_MARK, SpanNet, Windows, group_log_parts
from ragteam.reader.training.data import Built, Group
from ragteam.reader.training.groups import file_digest, weighted
from ragteam.reader.training.settings import ReaderSettings


def gold_indices(windows: Windows, group: Group, tokens: int) -> tuple[list[int], list[int]]:
    """Indices of the gold outcomes in the flattened [starts..., extras...] and [ends...,
    extras...] of a group whose windows hold `tokens` tokens each."""
    extras_at = len(windows.passage) * tokens
    if group.label in ("yes", "no", "none"):
        k = EXTRAS.index(group.label)
        ws = [w for w, p in enumerate(windows.passage) if group.label == "none" or p in group.gold]
        idx = [extras_at + w * len(EXTRAS) + k for w in ws]
        return idx, idx
    starts, ends = [], []
    for w, p in enumerate(windows.passage):
        offsets, inside = windows.offsets[w], windows.context[w]
        for a, b in group.spans[p]:
            i = next((t for t, (x, y) in enumerate(offsets) if inside[t] and x <= a < y), None)
            j = next((t for t, (x, y) in enumerate(offsets) if inside[t] and x < b <= y), None)
            if i is not None and j is not None and j >= i:
                starts.append(w * tokens + i)
                ends.append(w * tokens + j)
    return starts, ends


def group_loss(net: SpanNet, group: Group) -> Any | None:
    """The shared-normalisation loss of one group; None when no window holds its answer."""
    import torch

    windows = net.windows(group.question, list(group.texts))
    start, end, extra = net.logits(windows)
    starts, ends = gold_indices(windows, group, start.shape[1])
    if not starts:
        return None
    z_start, z_end = group_log_parts(start, end, extra)
    flat_start = torch.cat([start.flatten(), extra.flatten()])
    flat_end = torch.cat([end.flatten(), extra.flatten()])
    picked_start = torch.logsumexp(flat_start[torch.tensor(starts, device=net.device)], 0)
    picked_end = torch.logsumexp(flat_end[torch.tensor(ends, device=net.device)], 0)
    return (z_start - picked_start) + (z_end - picked_end)


def validate(net: SpanNet, held: Sequence[Group]) -> dict[str, float]:
    """Held loss, and EM/F1 of the best reading (a "none" group scores 1 when the reader's
    best is no answer)."""
    import torch

    from ragteam.common.metrics import exact_match, f1_score
    from ragteam.reader.read import Calibration, Reader
    from ragteam.types import Passage

    reader = Reader(net, {}, "training", Calibration(0.5, 0.5, 0.5))
    net.eval()
    losses, em, f1 = [], [], []
    with torch.inference_mode():
        for g in held:
            loss = group_loss(net, g)
            if loss is not None:
                losses.append(float(loss))
            passages = [Passage(f"p{i}", "", t) for i, t in enumerate(g.texts)]
            reading = reader.read(g.question, passages, top=1)
            said = "" if reading.no_answer > 0.5 or reading.best is None else reading.best.text
            golds = [""] if g.label == "none" else list(g.answers)
            em.append(exact_match(said, golds) if said or g.label != "none" else 1.0)
            f1.append(f1_score(said, golds) if said or g.label != "none" else 1.0)
    net.train()
    n = max(1, len(losses))
    return {
        "loss": sum(losses) / n,
        "em": sum(em) / max(1, len(em)),
        "f1": sum(f1) / max(1, len(f1)),
    }


def save_weights(net: SpanNet, out: Path, metadata: dict[str, str]) -> None:
    import torch
    from safetensors.torch import save_file

    from ragteam.reader.read import FORMAT

    tensors = {
        k: v.detach().to("cpu", torch.float16).contiguous() for k, v in net.changed_state().items()
    }
    tmp = out.with_name(out.name + ".tmp")
    marks = {"line_mark": net.line_mark} if net.line_mark else {}
    if net.heading_view:
        marks["heading_view"] = net.heading_view
    save_file(tensors, str(tmp), metadata={"format": FORMAT, **marks, **metadata})
    os.replace(tmp, out)


def train_reader(
    data: Path,
    out: Path,
    settings: ReaderSettings,
    report: Callable[[str], None] = lambda _: None,
    documents: Path | None = None,
    start: Path | None = None,
    groups: Path | None = None,
    squad: tuple[Path, ...] = (),
    tables: Path | None = None,
    people: Path | None = None,
) -> dict[str, Any]:
    """Build the groups from the training folder `data` (and questions made from the real
    documents under `documents`), or read them from `groups` when an earlier run wrote them
    there, then train as the module says, from the weights `start` (e.g. the shipped reader) or
    from the bare encoder, resuming from `out`.ckpt; `squad` names SQuAD-format files to read
    too. Returns the run's record (also written to
    `out`.json)."""
    built = reader_groups(data, settings, documents, groups, report, squad, tables, people)
    train = weighted(built.train, "people", settings.people_repeat)
    report(f"{len(train)} training groups, {len(built.held)} held")
    state = train_groups(train, built.held, out, settings, report, start)
    from ragteam.reader.training.calibrate import calibrate

    report("fitting the support, span and abstention thresholds on the held groups")
    state["calibration"] = calibrate(out, built.held, settings.seed)
    return write_record(out, settings, built, state, documents, start)


def write_record(
    out: Path,
    settings: ReaderSettings,
    built: Built,
    state: dict[str, Any],
    documents: Path | None,
    start: Path | None,
) -> dict[str, Any]:
    """The run's record (settings, data, history), written beside the weights as `out`.json."""
    record = {
        "settings": asdict(settings),
        "documents": None if documents is None else documents.name,
        "started_from": None if start is None else file_digest(start),
        "groups": {"train": len(built.train), "held": len(built.held)},
        "sources": _sources(built.train),
        **state,
    }
    out.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def reader_groups(
    data: Path,
    settings: ReaderSettings,
    documents: Path | None,
    groups: Path | None,
    report: Callable[[str], None],
    squad: tuple[Path, ...] = (),
    tables: Path | None = None,
    people: Path | None = None,
) -> Built:
    """The groups: read from `groups` when it exists (made with these settings), else built
    (and written to `groups` when given)."""
    from ragteam.reader.training.groups import (
        Wanted,
        build,
        groups_made_with_settings,
        load_groups,
        save_groups,
    )

    made_with = groups_made_with_settings(settings, documents, squad, tables, people)
    if groups is not None and groups.is_file():
        report(f"reading the groups from {groups}")
        return load_groups(groups, made_with)
    if not (data / "hotpotqa_train.jsonl").is_file():
        raise InputError(
            f"{data} holds no hotpotqa_train.jsonl: pass the training folder (shared/data/train)"
        )
    if documents is not None and not documents.is_dir():
        raise InputError(f"{documents} is not a folder: pass a folder of documents")
    wanted = Wanted(
        settings.clozes,
        documents,
        settings.doc_tables,
        settings.doc_clozes,
        settings.doc_pdfs,
        settings.wordings,
        tuple(squad),
        tables,
        settings.table_questions,
        settings.headings,
        table_rows=settings.table_rows,
        people=people,
        # each part's index beside the groups file (bench/docqa_train.py's default work)
        people_work=None if groups is None else groups.parent / "people",
        people_held=settings.people_held,
    )
    built = build(data, wanted, settings.held_share, settings.seed)
    if groups is not None:
        save_groups(built, groups, made_with)
        report(f"wrote the groups to {groups}")
    return built


def _sources(groups: Sequence[Group]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for g in groups:
        key = f"{g.source}/{g.label}"
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def _resumable(settings: ReaderSettings) -> dict[str, Any]:
    return {k: v for k, v in asdict(settings).items() if k not in ("minutes", "threads", "device")}


def train_groups(
    train: Sequence[Group],
    held: Sequence[Group],
    out: Path,
    settings: ReaderSettings,
    report: Callable[[str], None],
    start: Path | None = None,
) -> dict[str, Any]:
    """Train on `train`, validating on the first `held_checked` of `held`; the run's state
    (step, best held loss, history, seconds). Resumes from `out`.ckpt."""
    if not train:
        raise InputError("no training groups: pass --data with the training folder")
    total = max(1, math.ceil(len(train) * settings.epochs / settings.accumulate))
    net, optimizer, schedule = _trainable(settings, total)
    if start is not None:
        from ragteam.minilm.cross_encoder import read_weights
        from ragteam.reader.read import WEIGHTS

        net.load_changed(read_weights(start, WEIGHTS)[0])
        net.train()
    ckpt = out.with_name(out.name + ".ckpt")
    state = _resumed(ckpt, net, optimizer, schedule, settings, len(train), report)
    state.setdefault("steps", total)
    order = _order(len(train), total * settings.accumulate, settings.seed)
    began, spent = time.perf_counter(), state["seconds"]
    while state["step"] < total:
        step, take = state["step"], settings.accumulate
        _one_step(net, optimizer, [train[g] for g in order[step * take : (step + 1) * take]])
        schedule.step()
        state["step"] = step + 1
        state["seconds"] = spent + time.perf_counter() - began
        out_of_time = bool(settings.minutes) and time.perf_counter() - began > settings.minutes * 60
        if state["step"] % settings.check_every == 0 or state["step"] == total or out_of_time:
            _validated(net, held[: settings.held_checked], state, out, report, settings.keep)
            _checkpoint(ckpt, net, optimizer, schedule, state, _resumable(settings), len(train))
        if out_of_time:
            report("stopped for time; run the same command again to resume")
            break
    return state


def _trainable(settings: ReaderSettings, total: int) -> tuple[SpanNet, Any, Any]:
    """The network (word embeddings frozen), AdamW over the layers and heads, and a linear
    warm-up then linear decay over `total` steps."""
    import torch

    torch.manual_seed(settings.seed)
    if settings.device.startswith("cuda") and not torch.cuda.is_available():
        raise InputError(f"--device {settings.device}: torch sees no CUDA device here")
    net = SpanNet(
        settings.threads or None,
        LINE_MARK if settings.line_marks else "",
        settings.device,
        "path" if settings.headings else "",
    )
    net.train()
    for name, p in net.encoder.named_parameters():
        p.requires_grad = not name.startswith("embeddings.")
    optimizer = torch.optim.AdamW(
        [
            {"params": [p for p in net.encoder.parameters() if p.requires_grad], "lr": settings.lr},
            {"params": [*net.span.parameters(), *net.extra.parameters()], "lr": settings.head_lr},
        ],
        weight_decay=0.01,
    )
    warm = max(1, int(total * settings.warmup))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm)))
    )
    return net, optimizer, schedule


def _resumed(
    ckpt: Path,
    net: SpanNet,
    optimizer: Any,
    schedule: Any,
    settings: ReaderSettings,
    groups: int,
    report: Callable[[str], None],
) -> dict[str, Any]:
    """The run's state: fresh, or loaded (with the weights, optimizer and schedule) from a
    checkpoint of a run with the same settings and data."""
    import torch

    if not ckpt.is_file():
        return {"step": 0, "best": math.inf, "history": [], "seconds": 0.0}
    saved = torch.load(ckpt, weights_only=False, map_location=net.device)
    if saved["settings"] != _resumable(settings) or saved["groups"] != groups:
        raise InputError(
            f"{ckpt} is from a run with other settings or data: remove it to start again"
        )
    net.load_changed(saved["weights"])
    net.train()
    optimizer.load_state_dict(saved["optimizer"])
    schedule.load_state_dict(saved["schedule"])
    report(f"resumed at step {saved['state']['step']}")
    return saved["state"]


def _validated(
    net: SpanNet,
    held: Sequence[Group],
    state: dict[str, Any],
    out: Path,
    report: Any,
    keep: str = "loss",
) -> None:
    """Score the held groups, record them, and write the weights when their score (`keep`)
    is the best so far (`state["best"]`: the lowest loss, or the highest EM negated)."""
    scores = validate(net, held)
    state["history"].append(
        {"step": state["step"], "seconds": round(state["seconds"], 1), **scores}
    )
    shown = json.dumps({k: round(v, 4) for k, v in scores.items()})
    report(f"step {state['step']}/{state['steps']} ({state['seconds']:.0f} s): held {shown}")
    score = scores["loss"] if keep == "loss" else -scores["em"]
    if score < state["best"]:
        state["best"] = score
        save_weights(
            net, out, {"step": str(state["step"]), **{k: f"{v:.4f}" for k, v in scores.items()}}
        )


def _one_step(net: SpanNet, optimizer: Any, groups: list[Group]) -> None:
    import torch

    optimizer.zero_grad()
    used = 0
    for g in groups:
        loss = group_loss(net, g)
        if loss is not None:
            (loss / len(groups)).backward()
            used += 1
    if used:
        torch.nn.utils.clip_grad_norm_([p for m in net.modules() for p in m.parameters()], 1.0)
        optimizer.step()


def _order(n: int, wanted: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    order: list[int] = []
    while len(order) < wanted:
        epoch = list(range(n))
        rng.shuffle(epoch)
        order += epoch
    return order[:wanted]


def _checkpoint(path: Path, net, optimizer, schedule, state, settings, groups) -> None:  # noqa: ANN001
    import torch

    tmp = path.with_name(path.name + ".tmp")
    torch.save(
        {
            "weights": {k: v.detach().cpu().clone() for k, v in net.changed_state().items()},
            "optimizer": optimizer.state_dict(),
            "schedule": schedule.state_dict(),
            "state": state,
            "settings": settings,
            "groups": groups,
        },
        tmp,
    )
    os.replace(tmp, path)
