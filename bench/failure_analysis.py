"""How each role of each strategy behaved, counted from the traces of an evaluation run.

    python bench/failure_analysis.py bench/out/runs/seed0-multi [more run dirs]

Prints a markdown table per strategy found. Counts only; every number is re-derivable from
`results.jsonl`, so the failure analysis in docs/benchmarks.md can be checked and redone.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from ragteam.common.metrics import f1_score

# Names that occur only in our prompts' few-shot examples: seeing them in an answer or a note
# means the model copied the example instead of reading its input.
FEW_SHOT = ("Greyfin", "Reddick", "Maple Hill", "Aldren", "Ruth Calder", "1821", "Skarn")


def steps(row: dict[str, Any]) -> list[dict[str, Any]]:
    return (row.get("trace") or {}).get("steps", [])


def notes(row: dict[str, Any]) -> list[str]:
    return [s["output"] for s in steps(row) if s["kind"] == "note"]


def leaked(text: str) -> bool:
    return any(name in text for name in FEW_SHOT)


def common(rows: list[dict[str, Any]]) -> Counter:
    c: Counter = Counter()
    for r in rows:
        c["answer words"] += len(r["prediction"].split())
        c["answers copying a few-shot example"] += leaked(r["prediction"])
        c["empty answers"] += not r["prediction"].strip()
        c["answers F1 >= .5"] += r["metrics"]["f1"] >= 0.5
    return c


def ircot(rows: list[dict[str, Any]]) -> Counter:
    c: Counter = Counter()
    for r in rows:
        c["reasoner calls"] += sum(s.get("role") == "reasoner" for s in steps(r))
        c["stopped: reasoner repeated itself"] += any("repeated itself" in n for n in notes(r))
    return c


def smart(rows: list[dict[str, Any]]) -> Counter:
    c: Counter = Counter()
    for r in rows:
        for s in steps(r):
            if (
                s.get("role") == "reconstructor"
                and s["kind"] == "llm"
                and not s.get("parse_failures")
            ):
                intents = json.loads(s["output"])["intents"]
                c["intents"] += len(intents)
                c["intents ~ the question (token F1 >= .8)"] += sum(
                    f1_score(i, [r["question"]]) >= 0.8 for i in intents
                )
                c["repeated intents"] += len(intents) - len({i.lower() for i in intents})
            if s.get("role") == "locator" and s["kind"] == "llm":
                c["locator calls"] += 1
                c["locator calls failing to parse"] += bool(s.get("parse_failures"))
                if not s.get("parse_failures"):
                    c["judgements accepted"] += 1
                    c["judged relevant"] += bool(json.loads(s["output"])["relevant"])
        c["passages shown"] += sum(len(s["output"]) for s in steps(r) if s["kind"] == "retrieve")
        c["passages passed raw (locator failed)"] += sum("locator failed" in n for n in notes(r))
        c["facts snapped"] += sum("snapped" in n for n in notes(r))
        c["generator answered without facts"] += any(
            s.get("role") == "generator" and "own knowledge" in s["input"][0]["content"]
            for s in steps(r)
            if s["kind"] == "llm"
        )
    return c


def marag(rows: list[dict[str, Any]]) -> Counter:
    c: Counter = Counter()
    for r in rows:
        final = [s for s in steps(r) if s["kind"] == "note" and s["output"] == "final state"]
        done = final[-1]["meta"]["steps"] if final else []
        c["steps run"] += len(done)
        c["steps reporting success"] += sum(d.get("success") == "yes" for d in done)
        c["step answers 'yes'/'no'"] += sum(
            str(d.get("answer")).lower() in ("yes", "no") for d in done
        )
        c["stopped: a step reported no success"] += any("no success" in n for n in notes(r))
        for s in steps(r):
            if s.get("role") == "extractor" and not s.get("parse_failures"):
                c["extractor notes"] += 1
                c["extractor notes copying the few-shot example"] += leaked(s["output"])
    return c


PER_STRATEGY = {"ircot": ircot, "smart": smart, "marag": marag}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("runs", type=Path, nargs="+")
    args = parser.parse_args()
    by_strategy: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for run in args.runs:
        for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                by_strategy[row["strategy"]].append(row)
    for name, rows in by_strategy.items():
        counts = common(rows)
        counts.update(PER_STRATEGY.get(name, lambda _: Counter())(rows))  # keeps zero counts
        print(
            f"\n{name} ({len(rows)} questions)\n\n| count | total | per question |\n|---|---|---|"
        )
        for key, value in counts.items():
            print(f"| {key} | {value} | {value / len(rows):.2f} |")


if __name__ == "__main__":
    main()
