"""Benchmark 3: `oner` on dev300 questions with the embedded model: seconds per question and the
share of wall time spent outside model calls (framework overhead).

    python bench/oner_overhead.py --index bench/out/indexes/hybrid --limit 50

The LLM cache is off so that every call reaches the model.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from ragteam.asking.api import answer
from ragteam.llm import ModelOptions, Request, load_model
from ragteam.retrieval import load_index


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=Path("bench/data/hotpotqa/dev300.jsonl"))
    parser.add_argument("--index", type=Path, default=Path("bench/out/indexes/hybrid"))
    parser.add_argument("--limit", type=int, default=50)
    args = parser.parse_args()
    questions = [json.loads(line) for line in args.data.open()][: args.limit]
    index = load_index(args.index)
    model = load_model("embedded", ModelOptions(cache=False))
    index.retrieve("warm up the encoder", 5)
    model.complete(Request([{"role": "user", "content": "warm up"}], max_tokens=2))
    llm_seconds = 0.0
    retrieval_seconds = 0.0
    started = time.perf_counter()
    for q in questions:
        result = answer(q["question"], index=index, strategy="oner", model=model)
        totals = result.trace.totals()
        llm_seconds += totals["llm_seconds"]
        retrieval_seconds += totals["seconds"] - totals["llm_seconds"]
    wall = time.perf_counter() - started
    n = len(questions)
    print(f"questions: {n}, wall: {wall:.1f} s, per question: {wall / n:.2f} s")
    print(f"model calls: {llm_seconds:.1f} s ({llm_seconds / wall:.1%} of wall)")
    print(f"retrieval: {retrieval_seconds:.1f} s ({retrieval_seconds / wall:.1%})")
    print(f"overhead outside model calls: {(wall - llm_seconds) / wall:.1%}")


if __name__ == "__main__":
    main()
