"""Verdicts on labelled tasks (PubHealth true/false, ARC multiple choice): accuracy, macro-F1 and
recall per label of eval runs, each paired (bootstrap, 2,000 rounds) against always saying the
majority label and against another run.

    python bench/verdicts.py RUN_DIR [RUN_DIR ...] [--baseline RUN_DIR] [--own]

RUN_DIR is a `ragteam eval --out` folder; the gold label and the prediction are read from its
`results.jsonl`. The majority label is the most common gold label of the rows scored (for
PubHealth dev100, "true"; ARC's options are near balanced, so its floor is chance, 0.25)."""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from pathlib import Path

from ragteam.common.metrics import choice_accuracy


def rows_of(run: Path) -> dict[str, dict]:
    rows = {}
    for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if not row.get("error"):
            rows[row["id"]] = row
    return rows


def own_rows(rows: dict[str, dict]) -> dict[str, dict]:
    """The rows as the strategy itself answered them: the `said` of the trace's `own_verdict`
    note (rows without one, e.g. `read`'s, are left out)."""
    own = {}
    for i, row in rows.items():
        notes = [
            s["meta"]["said"]
            for s in row["trace"]["steps"]
            if s.get("meta", {}).get("event") == "own_verdict"
        ]
        if notes:
            own[i] = {**row, "prediction": notes[0]}
    return own


def label_of(row: dict) -> str:
    """The label a prediction names (its first word), for the per-label tables."""
    words = row["prediction"].strip().split()
    return words[0].strip(".,:;").lower() if words else ""


def bootstrap(diffs: list[float], rounds: int = 2000) -> tuple[float, float, float]:
    rng = random.Random(1)
    means = sorted(sum(rng.choice(diffs) for _ in diffs) / len(diffs) for _ in range(rounds))
    return sum(diffs) / len(diffs), means[int(0.025 * rounds)], means[int(0.975 * rounds)]


def summary(name: str, rows: dict[str, dict]) -> str:
    gold = {i: r["answers"][0].lower() for i, r in rows.items()}
    right = {i: choice_accuracy(r["prediction"], r["answers"][0]) for i, r in rows.items()}
    labels = sorted(set(gold.values()))
    recall, f1s = {}, []
    for label in labels:
        truly = [i for i in rows if gold[i] == label]
        said = [i for i in rows if label_of(rows[i]) == label]
        hits = sum(1 for i in truly if right[i])
        recall[label] = hits / len(truly) if truly else 0.0
        precision = hits / len(said) if said else 0.0
        f1s.append(2 * precision * recall[label] / (precision + recall[label]) if hits else 0.0)
    majority, count = Counter(gold.values()).most_common(1)[0]
    diffs = [right[i] - float(gold[i] == majority) for i in rows]
    mean, low, high = bootstrap(diffs)
    said = Counter(label_of(r) for r in rows.values())
    return (
        f"| {name} | {len(rows)} | {sum(right.values()) / len(rows):.3f} | "
        f"{sum(f1s) / len(f1s):.3f} | "
        + ", ".join(f"{k} {v:.2f}" for k, v in recall.items())
        + f" | {majority} {count / len(rows):.3f}: {mean:+.3f} ({low:+.3f} to {high:+.3f}) | "
        + ", ".join(f"{k} {v}" for k, v in said.most_common(5))
        + " |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--baseline", type=Path, help="a run every other is paired against")
    parser.add_argument(
        "--own", action="store_true", help="also score what each strategy said itself"
    )
    args = parser.parse_args()
    print(
        "| run | n | accuracy | macro-F1 | recall per label | minus the majority label "
        "(95% CI) | labels said |"
    )
    print("|---|---|---|---|---|---|---|")
    loaded = {run: rows_of(run) for run in args.runs}
    owns = {run: own_rows(rows) for run, rows in loaded.items()} if args.own else {}
    for run, rows in loaded.items():
        print(summary(run.name, rows))
        if owns.get(run):
            print(summary(f"{run.name}, the strategy's own", owns[run]))
    for run, rows in loaded.items():
        print(f"{run.name} grounding labels: {labels_shown(rows)}")
    for run, rows in loaded.items():
        if args.baseline:
            print(paired(rows, rows_of(args.baseline), f"{run.name} - {args.baseline.name}"))
        if owns.get(run):
            print(paired(rows, owns[run], f"{run.name} - its strategy's own"))


def labels_shown(rows: dict[str, dict]) -> str:
    """Each grounding label the answers were shown with: how many, and how often right."""
    by: dict[str, list[float]] = {}
    for r in rows.values():
        by.setdefault(r["grounding"], []).append(choice_accuracy(r["prediction"], r["answers"][0]))
    return ", ".join(f"{k} {len(v)} (right {sum(v) / len(v):.2f})" for k, v in sorted(by.items()))


def paired(rows: dict[str, dict], base: dict[str, dict], name: str) -> str:
    common = sorted(set(rows) & set(base))
    diffs = [
        choice_accuracy(rows[i]["prediction"], rows[i]["answers"][0])
        - choice_accuracy(base[i]["prediction"], base[i]["answers"][0])
        for i in common
    ]
    mean, low, high = bootstrap(diffs)
    return f"{name} accuracy on {len(common)}: {mean:+.3f} ({low:+.3f} to {high:+.3f})"


if __name__ == "__main__":
    main()
