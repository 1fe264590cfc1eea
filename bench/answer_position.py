"""Where the answer stood in the trained SMART agent's `<retrieval>` block, and the F1 it got
there: the agent judges passage [1] relevant and answers from it (docs/benchmarks.md 20a), so
a run's F1 splits by whether [1] holds a gold answer string.

    python bench/answer_position.py bench/out/runs/seed0-smart-v5m [more runs]

Rows: yes/no questions (no answer string to find); the answer in [1] (and whether the located
fact kept it); the answer only in another shown passage; the answer in no shown passage.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from ragteam.common.metrics import normalize_answer
from ragteam.smart.format import parse


def holds(text: str, answers: list[str]) -> bool:
    plain = normalize_answer(text)
    return any((a := normalize_answer(g)) and a in plain for g in answers)


def bucket(row: dict) -> str | None:
    notes = [s for s in row["trace"]["steps"] if s.get("meta", {}).get("event") == "trajectory"]
    if not notes:
        return None
    t = parse(notes[0]["meta"]["trajectory"])
    answers = row["answers"]
    if any(normalize_answer(g) in ("yes", "no") for g in answers):
        return "yes/no"
    if t.passages and holds(t.passages[0][1], answers):
        fact = " ".join(j.fact for j in t.judgements if j.relevant)
        return (
            "answer in [1], kept in the fact"
            if holds(fact, answers)
            else "answer in [1], not in the fact"
        )
    if any(holds(text, answers) for _, text in t.passages):
        return "answer only in another passage"
    return "answer in no shown passage"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=Path, nargs="+", help="eval run folders")
    for run in parser.parse_args().runs:
        rows = [json.loads(line) for line in (run / "results.jsonl").open(encoding="utf-8")]
        count: Counter[str] = Counter()
        f1: Counter[str] = Counter()
        for row in rows:
            key = bucket(row) or "no trajectory (not trajectory mode)"
            count[key] += 1
            f1[key] += row["metrics"]["f1"]
        print(f"\n{run} ({len(rows)} questions, F1 {sum(f1.values()) / max(1, len(rows)):.3f})")
        print("| where the answer was | questions | F1 |\n|---|---|---|")
        for key in sorted(count):
            print(f"| {key} | {count[key]} | {f1[key] / count[key]:.3f} |")


if __name__ == "__main__":
    main()
