"""The settings of `train build` and `train fit`, apart from the code that uses them: the
command line reads their flags from here (`ragteam.settings.flag`) without loading torch or an
index."""

from __future__ import annotations

from dataclasses import dataclass

from ragteam.errors import InputError
from ragteam.settings import flag
from ragteam.training import LORA_TARGETS

STAGES = ("short", "long")
SHORT_ROLES = ("reconstructor", "locator", "generator")


@dataclass(frozen=True)
class TopLayersSettings:
    """Fine-tuning the top layers and head of a MiniLM cross-encoder (`train rerank`,
    `train support`); the `flag`ged ones are those commands' flags."""

    epochs: float = flag(2.0, min=0.1, max=20)
    lr: float = flag(3e-5, min=1e-7, max=1e-2)
    head_lr: float = 1e-3
    layers: int = flag(2, "top MiniLM layers trained", min=1, max=6)
    batch: int = 4  # examples a step: retrieval blocks for the reranker, pairs for the checker
    seed: int = flag(0)
    threads: int = flag(0, "torch threads (0: default)", min=0)


@dataclass(frozen=True)
class ReaderSettings:
    """Training the span reader (`train reader`); the `flag`ged ones are its flags. Only
    `minutes`, `threads` and `device` may change when a stopped run is resumed."""

    epochs: float = flag(2.0, min=0.1, max=20)
    lr: float = flag(6e-5, "learning rate of the encoder layers", min=1e-7, max=1e-2)
    head_lr: float = 6e-4
    accumulate: int = flag(4, "question groups a step", min=1, max=64)
    warmup: float = 0.06  # share of the steps
    check_every: int = flag(100, "steps between validations (and checkpoints)", min=1)
    held_checked: int = 300  # held groups scored at each validation
    held_share: float = 0.1  # questions (by id hash) held out for validation
    clozes: int = flag(6000, "cloze questions made from the training corpus", min=0)
    # questions made by rule from the documents of --documents (training/reader_documents.py)
    doc_tables: int = flag(1500, "table questions from --documents", min=0)
    doc_clozes: int = flag(600, "cloze questions from --documents", min=0)
    # each table question also over the file printed to PDF (a sibling NAME.pdf, made by
    # `bench/print_pdfs.py`): the same question, the rows as a PDF's lines give them
    doc_pdfs: bool = flag(True, "also read the table questions over a file's printed PDF")
    # each table question in one of several wordings (reader_documents.CELL_WORDINGS, ...)
    wordings: bool = flag(False, "ask each table question in one of several wordings")
    line_marks: bool = flag(True, "read line breaks as a mark (model.LINE_MARK), not spaces")
    # WikiTableQuestions (--tables DIR): questions people wrote over tables, read as records
    table_questions: int = flag(3000, "questions from --tables (one cell's answers)", min=0)
    # each Wikipedia paragraph read with its title on a first line, as documents' passages are
    # read with their heading path: the weights then say they read headings (`heading_view`)
    headings: bool = flag(False, "read passages with their heading (title) line first")
    seed: int = flag(13)
    threads: int = flag(0, "torch threads (0: default)", min=0)
    minutes: float = flag(0.0, "stop after this many minutes, resumable (0: no limit)", min=0)
    device: str = flag("cpu", "torch device to train on (cpu, cuda, cuda:1, mps)")
    keep: str = flag(
        "loss",
        "which held score picks the weights kept: loss (lowest) or em (highest)",
        parse=lambda text: _keep(text),
    )


@dataclass(frozen=True)
class VerdictSettings:
    """Fitting the verdicts (`train verdict`); the `flag`ged ones are its flags."""

    claims: int = flag(3000, "training claims read (a seeded sample)", min=50)
    choices: int = flag(2000, "multiple-choice training rows read (a seeded sample)", min=50)
    k: int = flag(5, "passages retrieved per row, as an answer retrieves them", min=1, max=50)
    held_share: float = 0.2  # rows (by id hash) that choose the fit and are reported
    seed: int = flag(7)


RERANK = TopLayersSettings()
CHECK = TopLayersSettings(epochs=1.0, lr=5e-5, layers=3, batch=16)


@dataclass(frozen=True)
class BuildSettings:
    """How trajectories are built; the `flag`ged ones are `train build`'s flags."""

    k: int = flag(3, "passages per intent", min=1, max=20)  # as the `smart` strategy's k
    max_intents: int = flag(3, min=1, max=6)
    # trajectory length bound: passages past this are dropped
    max_passages: int = flag(6, "passages per trajectory", min=1, max=20)
    seed: int = flag(0)
    validation_share: float = 0.05
    # the posed question is searched first (as `smart` trajectory mode does, with_question),
    # and the <retrieval> block is filled up to `max_passages` with its further hits (as
    # inference does only with `--opt fill_block=true`: docs/benchmarks.md section 19a)
    question_first: bool = flag(
        False,
        "search the posed question first and fill the retrieval block up to --max-passages "
        "with its further hits (as `smart` does at inference)",
    )
    # each <retrieval> block in a seeded random order (training/reorder.py): retrieval order
    # puts a gold paragraph first so often that a locator learns the position, not the text
    shuffle_passages: bool = flag(
        False,
        "each retrieval block in a seeded random order, so that the locator cannot learn that "
        "the first passage is the relevant one",
    )


def _keep(text: str) -> str:
    if text not in ("loss", "em"):
        raise InputError(f"--keep must be loss or em, not '{text}'")
    return text


def _stages(text: str) -> tuple[str, ...]:
    if text == "both":
        return STAGES
    if text not in STAGES:
        raise InputError(f"--stage must be short, long or both, not '{text}'")
    return (text,)


@dataclass(frozen=True)
class FitSettings:
    """A training run's settings; the `flag`ged ones are `train fit`'s flags."""

    base: str = flag("embedded", "embedded | PATH.gguf | HF folder")
    stages: tuple[str, ...] = flag(
        STAGES,
        "short | long | both",
        name="--stage",
        parse=_stages,
        show=lambda s: "both" if s == STAGES else s[0],
    )
    # short stage; a fraction trains on a seeded share of the examples
    epochs: float = flag(1.0, "short-stage epochs", min=0.01, max=20)
    long_epochs: float = flag(1.0, "long-stage epochs", min=0.01, max=20)
    short_roles: tuple[str, ...] = flag(SHORT_ROLES, "roles of the short stage, comma-separated")
    lr: float = flag(1e-4, min=1e-7, max=1e-2)
    warmup: float = 0.03
    weight_decay: float = 0.0
    batch_tokens: int = flag(2048, "padded tokens per optimizer step", min=128, max=65536)
    max_length: int = flag(1536, "longer examples are left out (counted)", min=64, max=32768)
    seed: int = flag(0)
    threads: int = flag(0, "torch threads (0: default)", min=0)
    checkpoint_every: int = 25
    max_steps: int = flag(0, "stop after N steps (0: all)", min=0)
    # 0: full fine-tuning; > 0: a LoRA adapter of this rank (the flag's rank applies with --lora)
    lora_rank: int = flag(0, "LoRA rank (with --lora)", min=1, max=256, cli_default=16)
    lora_alpha: float = flag(32.0, "LoRA alpha (scale alpha/rank)", min=0.0)
    lora_dropout: float = flag(0.05, min=0.0, max=0.9)
    lora_targets: tuple[str, ...] = flag(
        LORA_TARGETS, "layers to adapt, comma-separated (default: every linear layer)"
    )
    # continue training this adapter folder (an earlier run's adapter/)
    lora_init: str = flag(
        "", "continue an adapter: a run's adapter/ folder or a .gguf adapter (with --lora)"
    )
    # weight of each locator judgement's deciding token ("Relevant"/"Irrelevant") in the loss
    decision_weight: float = flag(
        1.0,
        "loss weight of the token where each locator judgement is decided "
        "(Relevant/Irrelevant); 1: as any token",
        min=0.0,
    )

    def __post_init__(self) -> None:
        unknown = sorted(set(self.short_roles) - set(SHORT_ROLES))
        if unknown:
            raise InputError(
                f"--short-roles {','.join(unknown)}: not a SMART role; "
                f"roles: {', '.join(SHORT_ROLES)}"
            )
