"""`ragteam train labels answerer`: the answerer's per-label biases (true/false claims,
multiple choice) for `oner` on the embedded model, fitted on *training* rows and written to
`ragteam/data/answerer-labels.json` (read by `oner`: `ragteam.strategies.answer_labels`).

For each sampled training row (claims and multiple-choice questions of a formats training
folder; never a benchmark's), `oner` runs as it answers (the posed question, its search, the
passages that fit) up to the answerer's call; the messages that call would send are read by
the model (`LlamaCppModel.next_logprobs`) and the log-probability of each label's first token
at the reply's start is kept (a label's spellings, "True" and "true", summed);
`ragteam.agents.label_fit` fits the biases."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ragteam.agents.label_fit import fit_formats
from ragteam.common.atomic import write_json
from ragteam.errors import InputError
from ragteam.formats import Posed
from ragteam.llm.base import Completion, Request
from ragteam.retrieval.index import Index
from ragteam.strategies.answer_labels import spellings, template_digest
from ragteam.strategies.base import Context
from ragteam.strategies.baselines import OneR
from ragteam.trace import Trace

Progress = Callable[[int, int], None]
FILES = (("claims_train.jsonl", "claim"), ("multiple_choice_train.jsonl", "multiple_choice"))


class _Captured(Exception):
    """Stops `oner` at its answerer's call, holding the request it would send."""

    def __init__(self, request: Request) -> None:
        self.request = request


class _Capture:
    """The model as `oner` sees it, except that the answerer's call is captured."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self.identity, self.context_length = model.identity, model.context_length

    def count_tokens(self, text: str) -> int:
        return int(self._model.count_tokens(text))

    def tokenize(self, text: str) -> list[int]:
        return list(self._model.tokenize(text))

    def complete(self, request: Request, on_text: Any = None) -> Completion:
        raise _Captured(request)


def training_rows(data: Path, per_format: int, seed: int) -> list[dict[str, Any]]:
    """A seeded sample of `per_format` claims and multiple-choice training rows, posed."""
    rows = []
    for name, fmt in FILES:
        try:
            lines = (data / name).read_text(encoding="utf-8").splitlines()
            found = [json.loads(x) for x in lines if x.strip()]
        except (OSError, ValueError) as exc:
            raise InputError(f"{data / name}: {exc} (name the formats training folder)") from exc
        random.Random(seed).shuffle(found)
        for row in found[:per_format]:
            choices = row.get("choices") if fmt == "multiple_choice" else None
            posed = Posed(row["question"], choices or {}, claim=fmt == "claim")
            rows.append({"posed": posed, "gold": str(row["answers"][0]).strip()})
    return rows


def score(model: Any, index: Index, rows: list[dict[str, Any]], progress: Progress | None) -> None:
    """Adds each row's format, labels and label log-probabilities at the reply's start."""
    for n, row in enumerate(rows, start=1):
        try:
            OneR().run(row["posed"], Context(_Capture(model), index, Trace()))
            raise InputError("oner answered without its answerer's call")  # noqa: TRY301
        except _Captured as got:
            messages = list(got.request.messages)
        logp = model.next_logprobs(messages)
        fmt, labels = row["posed"].format, row["posed"].labels
        row["format"], row["labels"] = fmt, list(labels)
        row["logp"] = {
            label: float(np.log(sum(np.exp(logp[t]) for t in spellings(model.tokenize, label))))
            for label in labels
        }
        if progress is not None:
            progress(n, len(rows))


def fit_answerer_labels(
    model: Any,
    index: Index,
    data: Path,
    out: Path,
    per_format: int = 500,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Fit the answerer's biases for `model` on `data`'s training rows, searched in `index`,
    and write them to `out`; returns what was written."""
    rows = training_rows(data, per_format, seed)
    score(model, index, rows, progress)
    biases, report = fit_formats(rows, ("claim", "multiple_choice"), seed)
    written = {
        "model": model.identity,
        "role": "answerer",
        "template": template_digest(),
        "biases": biases,
        "fitted_on": {"data": str(data), "seed": seed, "report": report},
    }
    write_json(out, written)
    return written
