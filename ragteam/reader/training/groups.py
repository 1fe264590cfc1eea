"""All the span reader's training groups in one split: the training sets' groups
(`reader_data`) and, given a folder, the questions made from its documents
(`reader_documents`)."""

from __future__ import annotations

import gzip
import json
import os
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragteam.errors import InputError
from ragteam.reader.training.data import (
    Built,
    Group,
    clozes,
    held_out,
    hotpotqa,
    musique,
    squad,
)
from ragteam.reader.training.documents import document_groups
from ragteam.reader.training.settings import ReaderSettings


@dataclass(frozen=True)
class Wanted:
    """How many groups of each made kind `build` makes; `documents` is a folder of real
    documents for table and cloze questions (training/reader_documents.py), or None."""

    clozes: int
    documents: Path | None = None
    doc_tables: int = 0
    doc_clozes: int = 0
    doc_pdfs: bool = False  # table questions also over a file's printed copy and its book
    wordings: bool = False  # table questions in varied wordings
    squad: tuple[Path, ...] = ()  # SQuAD-format reading comprehension files
    tables: Path | None = None  # a WikiTableQuestions folder (training/reader_tables.py)
    table_questions: int = 0
    headings: bool = False  # paragraphs read with their title as a heading line
    table_rows: bool = False  # the tables' rows as `cell | cell`, not records
    # questions people wrote over documents (docqa-train's layout: reader/training/people.py),
    # their parts' indexes kept under `people_work`; `people_held` of their files held out
    people: Path | None = None
    people_work: Path | None = None
    people_held: float = 0.25


def build(train_dir: Path, wanted: Wanted, held: float = 0.1, seed: int = 13) -> Built:
    """Every group from the training folder (`shared/data/train` layout) and the documents,
    split by question (by file for documents); with documents, the held groups in a seeded
    order, so that a validation of the first few sees every source."""
    rng = random.Random(seed)
    groups: list[Group] = []
    groups += hotpotqa(train_dir / "hotpotqa_train.jsonl", rng, wanted.headings)
    groups += musique(train_dir / "musique_train.jsonl", rng, wanted.headings)
    if wanted.clozes:
        groups += clozes(train_dir / "train_corpus.jsonl", wanted.clozes, rng)
    if wanted.documents is not None:
        groups += document_groups(
            wanted.documents,
            wanted.doc_tables,
            wanted.doc_clozes,
            rng,
            wanted.doc_pdfs,
            wanted.wordings,
        )
    for path in wanted.squad:  # last: the other sources' groups stay those made without it
        groups += squad(path, rng)
    if wanted.tables is not None:  # after SQuAD, for the same reason
        from ragteam.reader.training.tables import wtq

        groups += wtq(wanted.tables, wanted.table_questions, rng, not wanted.table_rows)
    if wanted.people is not None:  # last, for the same reason
        from ragteam.reader.training.people import people_groups

        work = wanted.people_work or wanted.people / ".indexes"
        groups += people_groups(wanted.people, work, rng, headings=wanted.headings)
    built = Built()
    for g in groups:
        root = g.qid.split("/")[0]
        share = wanted.people_held if g.source == "people" else held
        (built.held if held_out(root, share) else built.train).append(g)
    if wanted.documents is not None or wanted.people is not None:
        random.Random(seed).shuffle(built.held)
    return built


def weighted(train: Sequence[Group], source: str, times: int) -> list[Group]:
    """The training groups with each of `source`'s read `times` times (the others once)."""
    return list(train) + [g for g in train if g.source == source] * (times - 1)


GROUPS_FORMAT = "ragteam-reader-groups/1"


def save_groups(built: Built, path: Path, made_with: dict[str, Any]) -> None:
    """Write the built groups (gzipped JSON lines, a header naming `made_with` first), aside
    then renamed: a run elsewhere (a GPU machine) trains on them without the data folders."""
    tmp = path.with_name(path.name + ".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8") as f:
        f.write(json.dumps({"format": GROUPS_FORMAT, "made_with": made_with}) + "\n")
        for split, groups in (("train", built.train), ("held", built.held)):
            for g in groups:
                f.write(json.dumps({"split": split, **asdict(g)}, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def groups_made_with(path: Path) -> dict[str, Any]:
    """The settings a groups file says it was built with (its header)."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            header = json.loads(f.readline())
    except (OSError, EOFError, ValueError) as exc:
        raise InputError(f"{path} cannot be read as reader groups ({exc}): remove it") from exc
    if not isinstance(header, dict) or header.get("format") != GROUPS_FORMAT:
        raise InputError(f"{path} is not a file of reader groups: remove it")
    return dict(header.get("made_with") or {})


def load_groups(path: Path, made_with: dict[str, Any]) -> Built:
    """The groups `save_groups` wrote; an InputError when the file is not such a file or was
    made with other settings than `made_with`."""
    found = groups_made_with(path)
    if found != made_with:
        raise InputError(
            f"{path} was built with {found}, not {made_with}: pass the same settings, or "
            "remove it to build it again"
        )
    built = Built()
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            f.readline()  # the header, read above
            for line in f:
                row = json.loads(line)
                (built.train if row.pop("split") == "train" else built.held).append(_group(row))
    except (OSError, EOFError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{path} cannot be read as reader groups ({exc}): remove it") from exc
    return built


def _group(row: dict[str, Any]) -> Group:
    return Group(
        row["question"],
        tuple(row["texts"]),
        row["label"],
        tuple(tuple((a, b) for a, b in spans) for spans in row["spans"]),
        tuple(row["gold"]),
        tuple(row["answers"]),
        row["source"],
        row["qid"],
    )


def groups_made_with_settings(
    settings: ReaderSettings,
    documents: Path | None,
    squad: tuple[Path, ...],
    tables: Path | None,
    people: Path | None = None,
) -> dict[str, Any]:
    """What a groups file says it was built with (a source is named only when it is used, so
    that earlier runs' files still load); an InputError for a named source that is missing."""
    made_with = {
        "clozes": settings.clozes,
        "documents": None if documents is None else documents.name,
        "doc_tables": settings.doc_tables,
        "doc_clozes": settings.doc_clozes,
        "doc_pdfs": settings.doc_pdfs,
        "held_share": settings.held_share,
        "seed": settings.seed,
    }
    if settings.wordings:  # named only when on, so that earlier runs' files still load
        made_with["wordings"] = True
    if tables is not None:  # likewise
        if not tables.is_dir():
            raise InputError(f"{tables} is not a folder: name a WikiTableQuestions checkout")
        made_with["tables"] = [tables.name, settings.table_questions]
        if settings.table_rows:
            made_with["table_rows"] = True
    if people is not None:  # likewise
        if not people.is_dir():
            raise InputError(f"{people} is not a folder: name a docqa-train folder")
        made_with["people"] = [people.name, settings.people_held]
    if settings.headings:
        made_with["headings"] = True
    if squad:  # likewise
        missing = [str(p) for p in squad if not p.is_file()]
        if missing:
            raise InputError(f"no such SQuAD-format file: {', '.join(missing)}")
        made_with["squad"] = [file_digest(p) for p in squad]
    return made_with


def file_digest(path: Path) -> str:
    import hashlib

    return f"{path.name} sha256:{hashlib.sha256(path.read_bytes()).hexdigest()[:16]}"
