"""The reading rules of §47 checked on TRAINING data (never on docqa-dev):

    python bench/reading_checks.py bounds --groups G.jsonl.gz [--weights W]
    python bench/reading_checks.py polar --data ../shared/data/train [--weights W]

`bounds`: EM/F1 of the reader's best span on the held span groups of a groups file
(`ragteam train reader --groups G`), with whole-token bounds and without, per source.
`polar`: how `is_polar` tells HotpotQA and MuSiQue training questions (answer yes/no or not),
how many StrategyQA questions it takes for yes/no, and how often the reader's yes/no outcome
is right on 200 StrategyQA questions over their facts and on HotpotQA's yes/no questions
over their gold paragraphs."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import ragteam.reader.read as reading
from ragteam.metrics import exact_match, f1_score
from ragteam.reader.polar import is_polar, polar_answer
from ragteam.training.reader_build import groups_made_with, load_groups
from ragteam.types import Passage


def _scores(reader, held) -> tuple[float, float, dict]:  # noqa: ANN001
    em = f1 = 0.0
    by: dict[str, list[float]] = {}
    for g in held:
        passages = [Passage(f"p{i}", "", t) for i, t in enumerate(g.texts)]
        reader._kept.clear()  # noqa: SLF001 - each reading computed afresh
        reader._kept_windows = 0  # noqa: SLF001
        best = reader.read(g.question, passages, top=1).best
        said = best.text if best else ""
        e, f = exact_match(said, g.answers), f1_score(said, g.answers)
        em, f1 = em + e, f1 + f
        row = by.setdefault(g.source, [0, 0.0, 0.0])
        row[0], row[1], row[2] = row[0] + 1, row[1] + e, row[2] + f
    per = {k: (int(n), round(e / n, 3), round(f / n, 3)) for k, (n, e, f) in by.items()}
    return em / len(held), f1 / len(held), per


def bounds(groups: Path, weights: Path | None) -> None:
    held = [g for g in load_groups(groups, groups_made_with(groups)).held if g.label == "span"]
    reader = reading.load_reader(weights)
    widened = _scores(reader, held)
    kept, reading.whole = reading.whole, lambda text, a, b: (a, b)
    try:
        raw = _scores(reader, held)
    finally:
        reading.whole = kept
    print(f"{len(held)} held span groups")
    print(f"whole tokens: EM {widened[0]:.3f} F1 {widened[1]:.3f}", widened[2])
    print(f"as read:      EM {raw[0]:.3f} F1 {raw[1]:.3f}", raw[2])


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8")]


def polar(data: Path, weights: Path | None) -> None:
    told = {"tp": 0, "fp": 0, "fn": 0}
    for name in ("hotpotqa_train.jsonl", "musique_train.jsonl"):
        for row in _rows(data / name):
            yn, said = row["answers"][0].lower() in ("yes", "no"), is_polar(row["question"])
            if yn or said:
                told["tp" if yn and said else "fp" if said else "fn"] += 1
    strategy = _rows(data / "formats" / "strategyqa_train.jsonl")
    print(
        f"is_polar on HotpotQA+MuSiQue train: {told}; StrategyQA taken as yes/no "
        f"{sum(is_polar(r['question']) for r in strategy)} of {len(strategy)}"
    )
    reader = reading.load_reader(weights)
    random.Random(5).shuffle(strategy)
    right = 0
    for row in strategy[:200]:
        ps = [
            Passage(f"p{i}", c["title"], " ".join(c["sentences"]))
            for i, c in enumerate(row["context"])
        ]
        said = polar_answer(reader.read(row["question"], ps, top=12))
        right += said is not None and said.kind == row["answers"][0].lower()
    gold_yes = sum(r["answers"][0].lower() == "yes" for r in strategy[:200])
    print(f"yes/no outcome on 200 StrategyQA: {right} right (answering yes always: {gold_yes})")
    right = n = 0
    for row in _rows(data / "hotpotqa_train.jsonl"):
        if row["answers"][0].lower() not in ("yes", "no"):
            continue
        gold = {t for t, _ in row["supporting_facts"]}
        ps = [
            Passage(f"p{i}", c["title"], "".join(c["sentences"]))
            for i, c in enumerate(row["context"])
            if c["title"] in gold
        ]
        said = polar_answer(reader.read(row["question"], ps, top=12))
        n, right = n + 1, right + (said is not None and said.kind == row["answers"][0].lower())
    print(f"yes/no outcome on HotpotQA's yes/no training questions: {right} of {n}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("bounds")
    b.add_argument("--groups", type=Path, required=True)
    b.add_argument("--weights", type=Path)
    p = sub.add_parser("polar")
    p.add_argument("--data", type=Path, required=True, help="the training folder")
    p.add_argument("--weights", type=Path)
    args = parser.parse_args()
    if args.command == "bounds":
        bounds(args.groups, args.weights)
    else:
        polar(args.data, args.weights)


if __name__ == "__main__":
    main()
