"""All the span reader's training groups in one split: the training sets' groups
(`reader_data`) and, given a folder, the questions made from its documents
(`reader_documents`)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from ragteam.training.reader_data import Built, Group, clozes, held_out, hotpotqa, musique
from ragteam.training.reader_documents import document_groups


@dataclass(frozen=True)
class Wanted:
    """How many groups of each made kind `build` makes; `documents` is a folder of real
    documents for table and cloze questions (training/reader_documents.py), or None."""

    clozes: int
    documents: Path | None = None
    doc_tables: int = 0
    doc_clozes: int = 0
    doc_pdfs: bool = False  # table questions also over a file's printed copy (NAME.html.pdf)


def build(train_dir: Path, wanted: Wanted, held: float = 0.1, seed: int = 13) -> Built:
    """Every group from the training folder (`shared/data/train` layout) and the documents,
    split by question (by file for documents); with documents, the held groups in a seeded
    order, so that a validation of the first few sees every source."""
    rng = random.Random(seed)
    groups: list[Group] = []
    groups += hotpotqa(train_dir / "hotpotqa_train.jsonl", rng)
    groups += musique(train_dir / "musique_train.jsonl", rng)
    if wanted.clozes:
        groups += clozes(train_dir / "train_corpus.jsonl", wanted.clozes, rng)
    if wanted.documents is not None:
        groups += document_groups(
            wanted.documents, wanted.doc_tables, wanted.doc_clozes, rng, wanted.doc_pdfs
        )
    built = Built()
    for g in groups:
        root = g.qid.split("/")[0]
        (built.held if held_out(root, held) else built.train).append(g)
    if wanted.documents is not None:
        random.Random(seed).shuffle(built.held)
    return built
