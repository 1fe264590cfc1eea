"""Paired comparisons and F1 by answer position for `bench/support.py answers` rows.

    python bench/reader_report.py ANSWERS --index IDX --questions Q [--base oner]

Per strategy: F1 and match with paired bootstrap CIs against `--base` (the same questions),
and F1 by where the gold answer first stood among the passages the strategy read (the §21a
view: [1], [2]-[6], nowhere), the answer found by normalised substring."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from ragteam.common.metrics import normalize_answer
from ragteam.retrieval import load_index


def paired(diffs: list[float], rounds: int = 2000) -> tuple[float, float, float]:
    rng = random.Random(1)
    means = sorted(sum(rng.choice(diffs) for _ in diffs) / len(diffs) for _ in range(rounds))
    return sum(diffs) / len(diffs), means[int(0.025 * rounds)], means[int(0.975 * rounds)]


def position(row: dict, golds: list[str], index) -> str:
    wanted = [normalize_answer(g) for g in golds if normalize_answer(g)]
    for n, pid in enumerate(row["read"][:6], start=1):
        passage = index.passage(pid)
        text = normalize_answer(passage.text) if passage else ""
        if any(f" {w} " in f" {text} " for w in wanted):
            return "[1]" if n == 1 else "[2]-[6]"
    return "nowhere"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("answers", type=Path)
    parser.add_argument("--index", required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--base", default="oner")
    args = parser.parse_args()
    golds = {}
    for line in args.questions.read_text().splitlines():
        if line.strip():
            q = json.loads(line)
            golds[q["id"]] = q["answers"]
    rows = [json.loads(x) for x in args.answers.read_text().splitlines() if x.strip()]
    index = load_index(args.index)
    by = {}
    for r in rows:
        by.setdefault(r["strategy"], {})[r["id"]] = r
    base = by[args.base]
    for strategy, mine in by.items():
        ids = [i for i in mine if i in base]
        f1 = sum(mine[i]["f1"] for i in ids) / len(ids)
        matched = sum(mine[i]["match"] for i in ids) / len(ids)
        line = f"{strategy:6} n={len(ids)} F1 {f1:.3f} match {matched:.3f}"
        if strategy != args.base:
            d, lo, hi = paired([mine[i]["f1"] - base[i]["f1"] for i in ids])
            m, mlo, mhi = paired([mine[i]["match"] - base[i]["match"] for i in ids])
            line += f"; F1 - {args.base} {d:+.3f} ({lo:+.3f} to {hi:+.3f})"
            line += f", match {m:+.3f} ({mlo:+.3f} to {mhi:+.3f})"
        print(line)
        places: dict[str, list[float]] = {}
        for i in ids:
            places.setdefault(position(mine[i], golds[i], index), []).append(mine[i]["f1"])
        print(
            "       F1 by where the answer stood: "
            + ", ".join(
                f"{k} {sum(v) / len(v):.3f} (n={len(v)})" for k, v in sorted(places.items())
            )
        )


if __name__ == "__main__":
    main()
