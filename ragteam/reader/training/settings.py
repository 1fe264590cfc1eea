"""The settings of `train reader`, apart from the code that uses them: the command line reads
their flags from here without torch."""

from __future__ import annotations

from dataclasses import dataclass

from ragteam.errors import InputError
from ragteam.settings import flag


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
    table_rows: bool = flag(False, "--tables' rows as `cell | cell`, as index sync writes them")
    # questions people wrote (--people DIR, docqa-train's layout): the share of their files
    # held out (the answer ranker is fitted on the held files' readings)
    people_held: float = flag(0.25, "share of --people's files held out", min=0.0, max=0.9)
    # people's questions are few beside the replayed sources: each of their training groups is
    # read this many times an epoch (the held ones once)
    people_repeat: int = flag(
        1, "times each of --people's training groups is read an epoch", min=1, max=10
    )
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


def _keep(text: str) -> str:
    if text not in ("loss", "em"):
        raise InputError(f"--keep must be loss or em, not '{text}'")
    return text
