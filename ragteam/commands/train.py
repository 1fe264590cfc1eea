"""`ragteam train build|shuffle|fit|export|rerank`: SMART trajectory learning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ragteam.commands.common import LoggedProgress, friendly_errors, out
from ragteam.commands.model_options import with_model_options
from ragteam.llm import ModelOptions
from ragteam.training import LORA_TARGETS

EXPORT_TYPES = ("q8_0", "f16", "f32")

train_app = typer.Typer(
    no_args_is_help=True,
    help="SMART trajectory learning: build trajectories, fine-tune, export a GGUF.",
)


def _bar(label: str) -> LoggedProgress:
    return LoggedProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        label=label,
    )


@train_app.command("build")
@with_model_options
def build_command(
    data: Annotated[list[Path], typer.Option("--data", help="training JSONL, repeatable")],
    model_options: ModelOptions,
    index: Annotated[Path, typer.Option(help="index to retrieve from (not the test corpus)")],
    out_dir: Annotated[Path, typer.Option("--out", help="folder to write (must be new)")],
    exclude: Annotated[
        list[Path], typer.Option(help="test JSONL whose questions must not be trained on")
    ] = [],  # noqa: B006
    teacher: Annotated[
        str | None, typer.Option(help="model spec writing intents/judgements where no gold")
    ] = None,
    k: Annotated[int, typer.Option(min=1, max=20, help="passages per intent")] = 3,
    max_intents: Annotated[int, typer.Option(min=1, max=6)] = 3,
    max_passages: Annotated[int, typer.Option(min=1, max=20, help="passages per trajectory")] = 6,
    skip_unsupported: Annotated[
        bool, typer.Option(help="skip rows whose answer is in no supporting paragraph")
    ] = False,
    seed: int = 0,
    question_first: Annotated[
        bool,
        typer.Option(
            help="search the posed question first and fill the retrieval block up to "
            "--max-passages with its further hits (as `smart` does at inference)"
        ),
    ] = False,
    keep_splits: Annotated[
        Path | None,
        typer.Option(
            help="an earlier build folder: its questions keep their train/validation split "
            "(a model trained on it is never validated on its training questions)"
        ),
    ] = None,
    shuffle_passages: Annotated[
        bool,
        typer.Option(
            help="each retrieval block in a seeded random order, so that the locator cannot "
            "learn that the first passage is the relevant one"
        ),
    ] = False,
) -> None:
    """Build long and short SMART trajectories (and their statistics) from training data."""
    from ragteam.llm import load_model
    from ragteam.retrieval.index import load_index
    from ragteam.training.build import BuildSettings
    from ragteam.training.dataset import build_dataset, read_all

    with friendly_errors():
        questions, skipped, compared = read_all(data, exclude, skip_unsupported)
        settings = BuildSettings(
            k=k,
            max_intents=max_intents,
            max_passages=max_passages,
            seed=seed,
            question_first=question_first,
            shuffle_passages=shuffle_passages,
        )
        loaded = load_index(index)
        teacher_model = load_model(teacher, model_options) if teacher else None
        counter = load_model("embedded")  # the embedded tokenizer counts training tokens
        with _bar("train build") as bar:
            task = bar.add_task("trajectories", total=len(questions), info="")
            stats = build_dataset(
                questions,
                loaded,
                out_dir,
                settings,
                teacher=teacher_model,
                count_tokens=counter.count_tokens,
                progress=lambda: bar.advance(task),
                keep_splits=keep_splits,
                extra={
                    "keep_splits": str(keep_splits) if keep_splits else None,
                    "data": [str(p) for p in data],
                    "exclude": [str(p) for p in exclude],
                    "excluded_questions_checked": compared,
                    "skipped_unsupported": skipped,
                    "teacher": teacher,
                },
            )
        out.print_json(json.dumps(stats))
        out.print(
            f"{stats['questions']} trajectories in {out_dir} "
            f"({len(skipped)} rows skipped; checked against {compared} excluded questions)"
        )


@train_app.command("shuffle")
def shuffle_command(
    data: Annotated[Path, typer.Option("--data", help="a folder from `train build`")],
    out_dir: Annotated[Path, typer.Option("--out", help="folder to write (must be new)")],
    seed: int = 0,
) -> None:
    """Copy a trajectory folder with each retrieval block in a seeded random order (labels,
    citations and splits follow; nothing is retrieved again)."""
    from ragteam.llm import load_model
    from ragteam.training.dataset import shuffle_dataset

    with friendly_errors():
        counter = load_model("embedded")  # the embedded tokenizer counts training tokens
        stats = shuffle_dataset(data, out_dir, seed, counter.count_tokens)
        out.print(f"{stats['questions']} trajectories in {out_dir}, blocks shuffled (seed {seed})")


@train_app.command("fit")
def fit_command(
    data: Annotated[Path, typer.Option("--data", help="a folder from `train build`")],
    out_dir: Annotated[Path, typer.Option("--out", help="training folder")],
    base: Annotated[str, typer.Option(help="embedded | PATH.gguf | HF folder")] = "embedded",
    stage: Annotated[str, typer.Option(help="short | long | both")] = "both",
    epochs: Annotated[float, typer.Option(min=0.01, max=20, help="short-stage epochs")] = 1.0,
    long_epochs: Annotated[float, typer.Option(min=0.01, max=20, help="long-stage epochs")] = 1.0,
    short_roles: Annotated[
        str, typer.Option(help="roles of the short stage, comma-separated")
    ] = "reconstructor,locator,generator",
    lr: Annotated[float, typer.Option(min=1e-7, max=1e-2)] = 1e-4,
    batch_tokens: Annotated[int, typer.Option(min=128, max=65536)] = 2048,
    max_length: Annotated[int, typer.Option(min=64, max=32768)] = 1536,
    max_steps: Annotated[int, typer.Option(min=0, help="stop after N steps (0: all)")] = 0,
    threads: Annotated[int, typer.Option(min=0, help="torch threads (0: default)")] = 0,
    device: Annotated[str, typer.Option(help="auto | cpu | cuda | cuda:N")] = "auto",
    seed: int = 0,
    export: Annotated[str, typer.Option(help="GGUF type to export: q8_0 | f16 | f32 | none")] = (
        "q8_0"
    ),
    resume: Annotated[bool, typer.Option(help="continue an interrupted run")] = False,
    lora: Annotated[
        bool, typer.Option(help="train a LoRA adapter over the frozen base (peft)")
    ] = False,
    lora_rank: Annotated[int, typer.Option(min=1, max=256, help="LoRA rank")] = 16,
    lora_alpha: Annotated[float, typer.Option(min=0.0, help="LoRA alpha (scale alpha/rank)")] = (
        32.0
    ),
    lora_dropout: Annotated[float, typer.Option(min=0.0, max=0.9)] = 0.05,
    lora_targets: Annotated[
        str, typer.Option(help="layers to adapt, comma-separated (default: every linear layer)")
    ] = ",".join(LORA_TARGETS),
    lora_init: Annotated[
        Path | None,
        typer.Option(
            help="continue an adapter: a run's adapter/ folder or a .gguf adapter (with --lora)"
        ),
    ] = None,
    decision_weight: Annotated[
        float,
        typer.Option(
            min=0.0,
            help="loss weight of the token where each locator judgement is decided "
            "(Relevant/Irrelevant); 1: as any token",
        ),
    ] = 1.0,
) -> None:
    """Fine-tune the base model on the trajectories (short, then long), then export a GGUF
    (a full model, or with --lora a GGUF LoRA adapter for `--lora FILE`)."""
    from ragteam.errors import InputError
    from ragteam.training.fit import SHORT_ROLES, STAGES, FitSettings, fit

    with friendly_errors():
        if stage not in (*STAGES, "both"):
            raise InputError(f"--stage must be short, long or both, not '{stage}'")
        roles = tuple(r.strip() for r in short_roles.split(",") if r.strip())
        unknown = sorted(set(roles) - set(SHORT_ROLES))
        if unknown:
            raise InputError(
                f"--short-roles {','.join(unknown)}: not a SMART role; "
                f"roles: {', '.join(SHORT_ROLES)}"
            )
        settings = FitSettings(
            base=base,
            stages=STAGES if stage == "both" else (stage,),
            epochs=epochs,
            long_epochs=long_epochs,
            short_roles=roles,
            lr=lr,
            batch_tokens=batch_tokens,
            max_length=max_length,
            max_steps=max_steps,
            threads=threads,
            seed=seed,
            lora_rank=lora_rank if lora else 0,
            lora_alpha=lora_alpha,
            lora_dropout=lora_dropout,
            lora_targets=tuple(t.strip() for t in lora_targets.split(",") if t.strip()),
            lora_init=str(lora_init) if lora_init else "",
            decision_weight=decision_weight,
        )
        if export not in ("none", *EXPORT_TYPES):
            raise InputError(f"--export must be one of {', '.join(EXPORT_TYPES)} or none")
        with _bar("train fit") as bar:
            task = bar.add_task("training", total=None, info="")

            def show(step: object) -> None:
                info = (
                    f"{step.stage} loss {step.loss:.3f} "  # type: ignore[attr-defined]
                    f"{step.tokens_per_second:.0f} tok/s"  # type: ignore[attr-defined]
                )
                bar.update(task, completed=step.step, total=step.steps, info=info)  # type: ignore[attr-defined]

            report = fit(data, out_dir, settings, resume=resume, on_step=show, device=device)
        out.print(
            f"trained {report.steps} steps, {report.tokens} tokens in {report.seconds:.0f} s "
            f"({report.tokens / max(report.seconds, 1e-9):.0f} tok/s); "
            f"on {report.device}; validation loss {report.validation}"
        )
        if export != "none" and lora:
            _export(out_dir / "adapter", base, out_dir / "adapter.gguf", "f16")
        elif export != "none":
            _export(out_dir / "model", base, out_dir / "model.gguf", export)


@train_app.command("rerank")
def rerank_command(
    data: Annotated[Path, typer.Option("--data", help="a folder from `train build`")],
    out_file: Annotated[Path, typer.Option("--out", help="reranker to write (.safetensors)")],
    epochs: Annotated[float, typer.Option(min=0.1, max=20)] = 2.0,
    lr: Annotated[float, typer.Option(min=1e-7, max=1e-2)] = 3e-5,
    layers: Annotated[int, typer.Option(min=1, max=6, help="top MiniLM layers trained")] = 2,
    threads: Annotated[int, typer.Option(min=0, help="torch threads (0: default)")] = 0,
    seed: int = 0,
) -> None:
    """Train the block reranker (MiniLM cross-encoder) on a trajectory folder's retrieval
    blocks; the epoch with the lowest validation loss is kept."""
    from ragteam.training.rerank import RerankSettings, train_reranker

    settings = RerankSettings(
        epochs=epochs, lr=lr, layers=layers, seed=seed, threads=threads or None
    )
    with friendly_errors():
        with _bar("train rerank") as bar:
            task = bar.add_task("training", total=None, info="")

            def show(step: int, steps: int, loss: float) -> None:
                bar.update(task, completed=step, total=steps, info=f"loss {loss:.3f}")

            record = train_reranker(data, out_file, settings, report=out.print, on_step=show)
        chosen = record["chosen"]
        out.print(
            f"wrote {out_file} (epoch {chosen['epoch']}, validation loss {chosen['loss']:.4f}; "
            f"answer first {chosen['first_answer_retrieval']:.3f} in retrieval order -> "
            f"{chosen['first_answer_reranked']:.3f})"
        )


@train_app.command("support")
def support_command(
    data: Annotated[
        Path,
        typer.Option("--data", help="a training folder as shared/data/train or bench/data/train"),
    ],
    out_file: Annotated[Path, typer.Option("--out", help="checker to write (.safetensors)")],
    epochs: Annotated[float, typer.Option(min=0.1, max=20)] = 1.0,
    lr: Annotated[float, typer.Option(min=1e-7, max=1e-2)] = 5e-5,
    layers: Annotated[int, typer.Option(min=1, max=6, help="top MiniLM layers trained")] = 3,
    threads: Annotated[int, typer.Option(min=0, help="torch threads (0: default)")] = 0,
    seed: int = 0,
) -> None:
    """Train the support checker (MiniLM cross-encoder: does this passage support this answer
    to this question?) on the gold evidence of the training files; the epoch with the lowest
    validation loss is kept, with the threshold that maximises validation balanced accuracy."""
    from ragteam.training.support import CheckerSettings, train_checker

    settings = CheckerSettings(
        epochs=epochs, lr=lr, layers=layers, seed=seed, threads=threads or None
    )
    with friendly_errors():
        with _bar("train support") as bar:
            task = bar.add_task("training", total=None, info="")

            def show(step: int, steps: int, loss: float) -> None:
                bar.update(task, completed=step, total=steps, info=f"loss {loss:.3f}")

            record = train_checker(data, out_file, settings, report=out.print, on_step=show)
        chosen = record["chosen"]
        out.print(
            f"wrote {out_file} (epoch {chosen['epoch']}: validation loss {chosen['loss']:.4f}, "
            f"AUROC {chosen['auroc']:.3f}, balanced accuracy {chosen['balanced_accuracy']:.3f} "
            f"at threshold {chosen['threshold']})"
        )


@train_app.command("export")
def export_command(
    model_dir: Annotated[Path, typer.Argument(help="a trained model folder (train fit's model/)")],
    out_file: Annotated[Path, typer.Option("--out", help="GGUF file to write")],
    base: Annotated[str, typer.Option(help="the GGUF it was trained from")] = "embedded",
    gguf_type: Annotated[str, typer.Option("--type", help="q8_0 | f16 | f32")] = "q8_0",
    lora_rank: Annotated[
        int,
        typer.Option(
            min=0, max=4096, help="write a full fine-tune as a LoRA adapter of this rank (0: no)"
        ),
    ] = 0,
) -> None:
    """Export a trained model folder as a GGUF for `--model PATH.gguf`, or a LoRA adapter
    folder (`train fit --lora`'s adapter/) as a GGUF adapter for `--lora PATH.gguf`. With
    `--lora-rank R` a full fine-tune becomes an adapter: each weight's change from the base cut
    to its top R singular directions."""
    with friendly_errors():
        if not lora_rank:
            _export(model_dir, base, out_file, gguf_type)
            return
        from ragteam.training.extract import extract_adapter

        adapter_type = "f32" if gguf_type == "f32" else "f16"
        written, report = extract_adapter(model_dir, base, lora_rank, out_file, adapter_type)
        out.print(
            f"wrote {written} ({written.stat().st_size / 1e6:.1f} MB; rank {lora_rank}, "
            f"{report.kept_energy:.1%} of the adapted weights' change kept, "
            f"{report.left_out_energy:.1%} of the whole change in weights no adapter carries); "
            f"use --lora {written}"
        )


def _export(model_dir: Path, base: str, target: Path, gguf_type: str) -> None:
    from ragteam.errors import InputError
    from ragteam.training.base_model import base_gguf
    from ragteam.training.export import export_folder
    from ragteam.training.lora_export import export_lora, is_adapter_folder

    source = base_gguf(base)
    if source is None:
        raise InputError(
            "GGUF export needs the base GGUF (its tokenizer and layout): train from a GGUF, "
            "or convert the HF folder with llama.cpp's convert_hf_to_gguf.py"
        )
    if is_adapter_folder(model_dir):
        written = export_lora(model_dir, source, target, "f32" if gguf_type == "f32" else "f16")
        use = f"--lora {written}"
    else:
        written = export_folder(model_dir, source, target, gguf_type)
        use = f"--model {written}"
    out.print(f"wrote {written} ({written.stat().st_size / 1e6:.1f} MB); use {use}")
