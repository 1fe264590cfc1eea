"""Seeded sample of the format training data (multiple choice, claims, entity questions,
StrategyQA) that ships in bench/data/train/formats/ (see bench/data/README.md).

    python bench/formats_sample.py SHARED/data/train/formats --out bench/data/train/formats

Rows are taken per `type` in a seeded order. Rows with evidence train every role. Labelled rows
without evidence (ARC-Easy/Challenge and PubHealth train, `*-noevidence`) train the generator
only (`ragteam train build` makes them answer-only: nothing says which passage supports their
label, so they must not teach the fact locator); they are the only training rows in the formats
of two SMART-suite tasks. EntityQuestions (open answers, no evidence) is not sampled: without
evidence in the training corpus its rows would teach answering from memory. The corpus is copied
whole: its other passages are the retrieval distractors.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
from collections import defaultdict
from pathlib import Path

# rows per type (the `type` field of each file); types not named are not sampled
QUOTA = {
    "obqa": 500,
    "fm2": 350,
    "covidfact": 250,
    "strategyqa": 300,
    "arc-easy-noevidence": 400,
    "arc-challenge-noevidence": 400,
    "pubhealth-noevidence": 500,
}
FILES = (
    "multiple_choice_train.jsonl",
    "claims_train.jsonl",
    "strategyqa_train.jsonl",
)


def sample(source: Path, out: Path, seed: int) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}
    for name in FILES:
        by_type: dict[str, list[str]] = defaultdict(list)
        with (source / name).open(encoding="utf-8") as handle:
            for line in handle:
                by_type[json.loads(line)["type"]].append(line)
        kept: list[str] = []
        for kind in sorted(by_type):
            rows = by_type[kind]
            random.Random(f"{seed}:{kind}").shuffle(rows)
            kept.extend(rows[: QUOTA.get(kind, 0)])
            counts[kind] = min(len(rows), QUOTA.get(kind, 0))
        if kept:
            (out / name).write_text("".join(kept), encoding="utf-8")
    shutil.copyfile(source / "formats_corpus.jsonl", out / "formats_corpus.jsonl")
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("source", type=Path, help="the full formats folder")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(json.dumps(sample(args.source, args.out, args.seed), indent=1))


if __name__ == "__main__":
    main()
