"""Fit the answerer's per-label biases (true/false claims, multiple choice) for `oner` on the
embedded model, on *training* rows, and write them to the package
(`ragteam/data/answerer-labels.json`, read by `oner`).

    python bench/answer_labels.py --data shared/data/train/formats --index /tmp/vd/formats-ix

For each sampled training row (claims and multiple-choice questions of the formats training
folder; never a benchmark's), `oner` runs as it answers (the posed question, its search of a
BM25 index of the training corpus, the passages that fit) up to the answerer's call; the
prompt that call would send is read by llama.cpp over the embedded GGUF, and the
log-probability of each label's first token at the reply's start is kept (a label's spellings,
"True" and "true", summed). The biases maximise accuracy on those rows, as
`bench/label_calibration.py` fits SMART's, and a format's are kept only when a two-fold
estimate (fit on one half, score the other) beats the uncalibrated accuracy; a fitted bias may
put every answer on the majority label, the floor by construction.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
from label_calibration import fit_formats

from ragteam.agents.answer_labels import DATA_FILE, spellings, template_digest
from ragteam.atomic import write_json
from ragteam.formats import pose, posed_format
from ragteam.llm.base import Completion, Request
from ragteam.llm.llamacpp import LlamaCppModel
from ragteam.retrieval import load_index
from ragteam.strategies.base import Context
from ragteam.strategies.baselines import OneR
from ragteam.trace import Trace


class _Captured(Exception):
    """Stops `oner` at its answerer's call, holding the request it would send."""

    def __init__(self, request: Request) -> None:
        self.request = request


class Capture:
    """The embedded model as `oner` sees it, except that the answerer's call is captured."""

    def __init__(self, model: LlamaCppModel) -> None:
        self._model = model
        self.identity, self.context_length = model.identity, model.context_length

    def count_tokens(self, text: str) -> int:
        return self._model.count_tokens(text)

    def tokenize(self, text: str) -> list[int]:
        return self._model.tokenize(text)

    def complete(self, request: Request, on_text: Any = None) -> Completion:
        raise _Captured(request)


def rows_of(data: Path, per_format: int, seed: int) -> list[dict]:
    rows = []
    for name, fmt in (("claims_train.jsonl", "claim"), ("multiple_choice_train.jsonl", "mc")):
        found = [json.loads(x) for x in (data / name).read_text(encoding="utf-8").splitlines()]
        random.Random(seed).shuffle(found)
        for row in found[:per_format]:
            choices = row.get("choices") if fmt == "mc" else None
            posed = pose(row["question"], choices, claim=fmt == "claim")
            rows.append({"posed": posed, "gold": str(row["answers"][0]).strip()})
    return rows


def score(model: LlamaCppModel, index: Any, rows: list[dict]) -> None:
    """Adds each row's format, labels and label log-probabilities at the reply's start."""
    for n, row in enumerate(rows, start=1):
        if n % 50 == 0:
            print(f"scored {n}/{len(rows)}", flush=True)
        try:
            OneR().run(row["posed"], Context(Capture(model), index, Trace()))
        except _Captured as got:
            messages = list(got.request.messages)
        logp = model.next_logprobs(messages)
        fmt, labels = posed_format(row["posed"])
        row["format"], row["labels"] = fmt, list(labels)
        row["logp"] = {
            label: float(np.log(sum(np.exp(logp[t]) for t in spellings(model.tokenize, label))))
            for label in labels
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="the formats training folder")
    parser.add_argument("--index", type=Path, required=True, help="a BM25 index of its corpus")
    parser.add_argument("--per-format", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=DATA_FILE)
    args = parser.parse_args()
    model = LlamaCppModel(n_threads=2)
    rows = rows_of(args.data, args.per_format, args.seed)
    score(model, load_index(args.index), rows)
    biases, report = fit_formats(rows, ("claim", "multiple_choice"), args.seed)
    print(json.dumps(report, indent=1), flush=True)
    write_json(
        args.out,
        {
            "model": model.identity,
            "role": "answerer",
            "template": template_digest(),
            "biases": biases,
            "fitted_on": {"data": str(args.data), "seed": args.seed, "report": report},
        },
    )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
