"""Evaluation throughput: one local process vs a 2-node local Ray cluster, same questions.

    python bench/ray_eval_speed.py --data bench/out/dev300-seed0-100.jsonl \
        --index bench/out/indexes/hybrid -s oner --n 20 --out bench/out/ray-eval-speed.json

Local: the embedded model in this process (llama.cpp on every core, one question at a time).
Ray: a head and a worker node on 127.0.0.1 (1 CPU each), one actor per node, each with its own
model on one thread. LLM cache off for both. Rows are compared without their timings.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from ragteam.eval.evaluate import evaluate
from ragteam.eval.row import EvalRow
from ragteam.llm import ModelOptions
from ragteam.scale.local_cluster import local_cluster


def stable(row: EvalRow) -> tuple:
    steps = [(s["kind"], s["role"], json.dumps(s["output"])) for s in row.trace["steps"]]
    return (row.id, row.strategy, row.prediction, json.dumps(row.metrics), tuple(steps))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("-s", "--strategies", default="oner")
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    report = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "q.jsonl"
        lines = args.data.read_text(encoding="utf-8").splitlines()[: args.n]
        data.write_text("\n".join(lines) + "\n", encoding="utf-8")
        common = {"strategies": args.strategies, "index": args.index, "model": "embedded"}
        started = time.perf_counter()
        local = evaluate(
            data, Path(tmp) / "local", model_options=ModelOptions(cache=False), workers=1, **common
        )
        report["local_s"] = round(time.perf_counter() - started, 1)
        with local_cluster(2, 1) as address:
            started = time.perf_counter()
            remote = evaluate(
                data,
                Path(tmp) / "ray",
                ray=address,
                model_options=ModelOptions(cache=False),
                **common,
            )
            report["ray_s_including_actor_start"] = round(time.perf_counter() - started, 1)
    same = sorted(map(stable, local)) == sorted(map(stable, remote))
    report |= {
        "pairs": len(local),
        "local_pairs_per_min": round(60 * len(local) / report["local_s"], 2),
        "ray_pairs_per_min": round(60 * len(remote) / report["ray_s_including_actor_start"], 2),
        "identical_rows_without_timings": same,
        "identical_count": len(set(map(stable, local)) & set(map(stable, remote))),
    }
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
