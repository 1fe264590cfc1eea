"""Fitting `ragteam.reader.asks`: whether a question asks for a heading, learned from the kinds
of the questions people wrote over real manuals (docqa-train's layout: PART/questions.jsonl,
each question with its `kind`; "heading" is the kind whose answer is a heading). Its
validation files' questions (`people.VALIDATION`, and the office part's unanswerable ones, held
with them) are never read. Cross-validated by file (five folds of the files, by hash) before
the model is fitted on every training question."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragteam.common.linear import fit_logistic, sigmoid
from ragteam.errors import InputError
from ragteam.reader.asks import HeadingQuestions, features, tokens
from ragteam.reader.training.data import fold_of
from ragteam.reader.training.people import VALIDATION, file_group, is_validation

L2 = 30.0  # chosen by the cross-validation by file (docs/benchmarks.md section 74)
THRESHOLD = 0.2
LEAST = 3  # questions a token must stand in to be a feature
FOLDS = 5


@dataclass(frozen=True)
class Asked:
    question: str
    heading: bool
    group: str  # its file's: folds hold out whole files


def asked_rows(folder: Path, exclude: tuple[str, ...] = VALIDATION) -> list[Asked]:
    """Every training question of the parts under `folder` with whether it asks for a heading."""
    parts = sorted(p for p in folder.iterdir() if (p / "questions.jsonl").is_file())
    if not parts:
        raise InputError(f"{folder} holds no PART/questions.jsonl: name a docqa-train folder")
    rows = []
    for part in parts:
        for line in (part / "questions.jsonl").read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            q = json.loads(line)
            if not is_validation(part.name, q, exclude):
                rows.append(Asked(q["question"], q["kind"] == "heading", file_group(part.name, q)))
    return rows


def _fitted(rows: list[Asked], l2: float, threshold: float) -> HeadingQuestions:
    counts = Counter(t for r in rows for t in tokens(r.question))
    vocab = tuple(sorted(t for t, n in counts.items() if n >= LEAST))
    x = features({t: i for i, t in enumerate(vocab)}, [r.question for r in rows])
    y = np.array([r.heading for r in rows], dtype="float64")
    return HeadingQuestions(vocab, fit_logistic(x, y, l2), threshold)


def cross_validated(rows: list[Asked], l2: float, threshold: float) -> dict[str, float]:
    """Each question judged by the model fitted without its file's fold: how many heading
    questions it finds (recall) and how many of those it says are (precision)."""
    fold = [fold_of(r.group, FOLDS) for r in rows]
    said = np.zeros(len(rows), dtype=bool)
    for f in range(FOLDS):
        train = [r for r, n in zip(rows, fold, strict=True) if n != f]
        held = [i for i, n in enumerate(fold) if n == f]
        if not held or not any(r.heading for r in train):
            continue
        model = _fitted(train, l2, threshold)
        p = sigmoid(model.model(model.features([rows[i].question for i in held])))
        said[held] = p >= threshold
    truth = np.array([r.heading for r in rows])
    found = int((said & truth).sum())
    return {
        "questions": len(rows),
        "headings": int(truth.sum()),
        "found": found,
        "false": int((said & ~truth).sum()),
        "recall": round(found / max(1, int(truth.sum())), 3),
        "precision": round(found / max(1, int(said.sum())), 3),
    }


def fit_heading_questions(
    rows: list[Asked], l2: float = L2, threshold: float = THRESHOLD
) -> HeadingQuestions:
    """The model fitted on every row, with its cross-validated numbers in `fitted`."""
    if not any(r.heading for r in rows) or all(r.heading for r in rows):
        raise InputError("need questions that ask for a heading and questions that do not")
    model = _fitted(rows, l2, threshold)
    checked = cross_validated(rows, l2, threshold)
    return HeadingQuestions(model.vocab, model.model, threshold, {"l2": l2, **checked})
