"""`ragteam train build|shuffle|fit|export|rerank|...`: SMART trajectory learning, and the
other trained parts (`reader`, `yesno`, `support`, `verdict`, `labels`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ragteam.commands.common import friendly_errors, out
from ragteam.commands.flags import with_settings
from ragteam.commands.model_options import with_model_options
from ragteam.commands.train_labels import labels_app
from ragteam.commands.train_yesno import yesno_command
from ragteam.commands.training_bars import progress_bar, train_top_layers
from ragteam.llm import ModelOptions
from ragteam.minilm.settings import CHECK, RERANK, TopLayersSettings
from ragteam.reader.training.settings import ReaderSettings
from ragteam.reader.training.yesno import YESNO
from ragteam.smart.training.settings import BuildSettings, FitSettings
from ragteam.verdict.train_settings import VerdictSettings

if TYPE_CHECKING:
    from ragteam.smart.training.fit import StepInfo

EXPORT_TYPES = ("q8_0", "f16", "f32")

train_app = typer.Typer(
    no_args_is_help=True,
    help="SMART trajectory learning: build trajectories, fine-tune, export a GGUF; and the "
    "other trained parts (reader, yes/no decider, support checker, reranker, verdicts, label "
    "biases).",
)
train_app.add_typer(labels_app, name="labels")
train_app.command("yesno")(with_settings("settings", YESNO)(yesno_command))


BuiltData = Annotated[Path, typer.Option("--data", help="a folder from `train build`")]


@train_app.command("build")
@with_model_options
@with_settings("settings", BuildSettings)
def build_command(
    data: Annotated[list[Path], typer.Option("--data", help="training JSONL, repeatable")],
    model_options: ModelOptions,
    settings: BuildSettings,
    index: Annotated[Path, typer.Option(help="index to retrieve from (not the test corpus)")],
    out_dir: Annotated[Path, typer.Option("--out", help="folder to write (must be new)")],
    exclude: Annotated[
        list[Path], typer.Option(help="test JSONL whose questions must not be trained on")
    ] = [],  # noqa: B006
    teacher: Annotated[
        str | None, typer.Option(help="model spec writing intents/judgements where no gold")
    ] = None,
    skip_unsupported: Annotated[
        bool, typer.Option(help="skip rows whose answer is in no supporting paragraph")
    ] = False,
    keep_splits: Annotated[
        Path | None,
        typer.Option(
            help="an earlier build folder: its questions keep their train/validation split "
            "(a model trained on it is never validated on its training questions)"
        ),
    ] = None,
) -> None:
    """Build long and short SMART trajectories (and their statistics) from training data."""
    from ragteam.llm import load_model
    from ragteam.retrieval.index import load_index
    from ragteam.smart.training.dataset import build_dataset, read_all

    with friendly_errors():
        questions, skipped, compared = read_all(data, exclude, skip_unsupported)
        loaded = load_index(index)
        teacher_model = load_model(teacher, model_options) if teacher else None
        counter = load_model("embedded")  # the embedded tokenizer counts training tokens
        with progress_bar("train build") as bar:
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
    data: BuiltData,
    out_dir: Annotated[Path, typer.Option("--out", help="folder to write (must be new)")],
    seed: int = 0,
) -> None:
    """Copy a trajectory folder with each retrieval block in a seeded random order (labels,
    citations and splits follow; nothing is retrieved again)."""
    from ragteam.llm import load_model
    from ragteam.smart.training.dataset import shuffle_dataset

    with friendly_errors():
        counter = load_model("embedded")  # the embedded tokenizer counts training tokens
        stats = shuffle_dataset(data, out_dir, seed, counter.count_tokens)
        out.print(f"{stats['questions']} trajectories in {out_dir}, blocks shuffled (seed {seed})")


@train_app.command("fit")
@with_settings("settings", FitSettings)
def fit_command(
    data: BuiltData,
    out_dir: Annotated[Path, typer.Option("--out", help="training folder")],
    settings: FitSettings,
    device: Annotated[str, typer.Option(help="auto | cpu | cuda | cuda:N")] = "auto",
    export: Annotated[str, typer.Option(help="GGUF type to export: q8_0 | f16 | f32 | none")] = (
        "q8_0"
    ),
    resume: Annotated[bool, typer.Option(help="continue an interrupted run")] = False,
    lora: Annotated[
        bool, typer.Option(help="train a LoRA adapter over the frozen base (peft)")
    ] = False,
) -> None:
    """Fine-tune the base model on the trajectories (short, then long), then export a GGUF
    (a full model, or with --lora a GGUF LoRA adapter for `--lora FILE`)."""
    from ragteam.errors import InputError
    from ragteam.smart.training.fit import fit

    with friendly_errors():
        if export not in ("none", *EXPORT_TYPES):
            raise InputError(f"--export must be one of {', '.join(EXPORT_TYPES)} or none")
        if not lora:
            settings = dataclasses.replace(settings, lora_rank=0)
        with progress_bar("train fit") as bar:
            task = bar.add_task("training", total=None, info="")

            def show(step: StepInfo) -> None:
                info = f"{step.stage} loss {step.loss:.3f} {step.tokens_per_second:.0f} tok/s"
                bar.update(task, completed=step.step, total=step.steps, info=info)

            report = fit(data, out_dir, settings, resume=resume, on_step=show, device=device)
        out.print(
            f"trained {report.steps} steps, {report.tokens} tokens in {report.seconds:.0f} s "
            f"({report.tokens / max(report.seconds, 1e-9):.0f} tok/s); "
            f"on {report.device}; validation loss {report.validation}"
        )
        if export != "none" and lora:
            _export(out_dir / "adapter", settings.base, out_dir / "adapter.gguf", "f16")
        elif export != "none":
            _export(out_dir / "model", settings.base, out_dir / "model.gguf", export)


@train_app.command("rerank")
@with_settings("settings", RERANK)
def rerank_command(
    data: BuiltData,
    out_file: Annotated[Path, typer.Option("--out", help="reranker to write (.safetensors)")],
    settings: TopLayersSettings,
) -> None:
    """Train the block reranker (MiniLM cross-encoder) on a trajectory folder's retrieval
    blocks; the epoch with the lowest validation loss is kept."""
    from ragteam.smart.training.rerank import train_reranker

    chosen = train_top_layers("train rerank", train_reranker, data, out_file, settings)
    out.print(
        f"wrote {out_file} (epoch {chosen['epoch']}, validation loss {chosen['loss']:.4f}; "
        f"answer first {chosen['first_answer_retrieval']:.3f} in retrieval order -> "
        f"{chosen['first_answer_reranked']:.3f})"
    )


@train_app.command("support")
@with_settings("settings", CHECK)
def support_command(
    data: Annotated[
        Path,
        typer.Option("--data", help="a training folder as shared/data/train or bench/data/train"),
    ],
    out_file: Annotated[Path, typer.Option("--out", help="checker to write (.safetensors)")],
    settings: TopLayersSettings,
) -> None:
    """Train the support checker (MiniLM cross-encoder: does this passage support this answer
    to this question?) on the gold evidence of the training files; the epoch with the lowest
    validation loss is kept, with the threshold that maximises validation balanced accuracy."""
    from ragteam.support.training.checker import train_checker

    chosen = train_top_layers("train support", train_checker, data, out_file, settings)
    out.print(
        f"wrote {out_file} (epoch {chosen['epoch']}: validation loss {chosen['loss']:.4f}, "
        f"AUROC {chosen['auroc']:.3f}, balanced accuracy {chosen['balanced_accuracy']:.3f} "
        f"at threshold {chosen['threshold']})"
    )


TablesOpt = Annotated[
    Path | None,
    typer.Option(
        "--tables",
        help="a WikiTableQuestions folder (data/training.tsv, csv/, page/): questions people "
        "wrote over tables, read as ragteam reads tables (--table-questions of them)",
    ),
]


PeopleOpt = Annotated[
    Path | None,
    typer.Option(
        "--people",
        help="questions people wrote over documents (docqa-train's layout: PART/files, "
        "PART/questions.jsonl); its validation files are never read",
    ),
]


@train_app.command("reader")
@with_settings("settings", ReaderSettings())
def reader_command(
    data: Annotated[
        Path, typer.Option("--data", help="the training folder (as shared/data/train)")
    ],
    out_file: Annotated[Path, typer.Option("--out", help="reader weights to write (.safetensors)")],
    settings: ReaderSettings,
    documents: Annotated[
        Path | None,
        typer.Option(
            "--documents",
            help="a folder of real documents: table and cloze questions are made from them",
        ),
    ] = None,
    start: Annotated[
        Path | None,
        typer.Option("--start", help="reader weights to start from (default: the bare encoder)"),
    ] = None,
    groups: Annotated[
        Path | None,
        typer.Option(
            "--groups",
            help="read the training groups from this file, or build them and write it "
            "(.jsonl.gz; to train elsewhere, e.g. on a GPU machine)",
        ),
    ] = None,
    squad: Annotated[
        list[Path] | None,
        typer.Option(
            "--squad",
            help="a SQuAD-format reading comprehension file (v1.1 or 2.0) to train on too; "
            "repeat for more",
        ),
    ] = None,
    tables: TablesOpt = None,
    people: PeopleOpt = None,
) -> None:
    """Train the span reader (MiniLM with start/end and no-answer/yes/no heads, shared
    normalisation over a question's passages) on HotpotQA and MuSiQue train and cloze questions
    from the training corpus. Validates and checkpoints every --check-every steps, keeps the
    weights of the best validation loss (or EM: --keep em); run it again to resume a stopped
    run."""
    from ragteam.reader.training.train import train_reader

    with friendly_errors():
        sources = (documents, start, groups, tuple(squad or ()), tables, people)
        record = train_reader(data, out_file, settings, lambda line: out.print(line), *sources)
    last = record["history"][-1] if record["history"] else {}
    out.print(
        f"wrote {out_file} (step {record['step']}/{record['steps']}; best held "
        f"{settings.keep} {abs(record['best']):.4f}; last held EM {last.get('em', 0):.3f} "
        f"F1 {last.get('f1', 0):.3f})"
    )


@train_app.command("verdict")
@with_settings("settings", VerdictSettings())
def verdict_command(
    data: Annotated[
        Path,
        typer.Option("--data", help="the formats training folder (as shared/data/train/formats)"),
    ],
    index_dir: Annotated[
        Path, typer.Option("--index", help="an index of that folder's formats_corpus.jsonl")
    ],
    out_file: Annotated[Path, typer.Option("--out", help="verdict file to write (.json)")],
    settings: VerdictSettings,
) -> None:
    """Fit the true/false and multiple-choice verdicts on training rows: features from the
    span reader and MiniLM over passages retrieved from --index, a logistic regression for
    claims (falling back to the majority label where it does not beat it on held rows) and a
    softmax over options. Features are saved as they are read; run it again to resume."""
    from ragteam.verdict.training.fit import fit_verdicts

    with friendly_errors():
        verdicts = fit_verdicts(data, index_dir, out_file, settings, lambda line: out.print(line))
    claim, choice = verdicts.claim.held, verdicts.choice.held
    fallback = ", so the majority label is used" if verdicts.claim.use_majority else ""
    out.print(
        f"wrote {out_file}: held claims accuracy {claim['accuracy']:.3f} (majority "
        f"{claim['majority']:.3f}{fallback}); "
        f"held multiple choice accuracy {choice['accuracy']:.3f} (chance {choice['chance']:.3f})"
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
        from ragteam.smart.training.extract import extract_adapter

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
    from ragteam.smart.training.base_model import base_gguf
    from ragteam.smart.training.export import export_folder
    from ragteam.smart.training.lora_export import export_lora, is_adapter_folder

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
