"""The span reader in PyTorch and in ONNX Runtime (issue 89: the reader at less CPU, the same
answers), on HotpotQA dev300's questions, each read over its two gold passages and the next
three of the corpus (five passages, as `read` reads its top 5).

    python bench/reader_runtime.py --n 100 --threads 2 --out bench/out/reader-runtime.json

Each runtime in a fresh process (RAGTEAM_READER_RUNTIME), the reader loaded (and, for ONNX,
exported once into the cache folder) before timing: CPU-seconds and wall seconds a reading,
then per question whether the best span (passage, start, end) and the top 5 are the same, and
the largest difference of a top span's score."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data" / "hotpotqa"

PROBE = """
import json, sys, time
from ragteam.reader.read import load_reader
from ragteam.types import Passage
n, threads = int(sys.argv[1]), int(sys.argv[2])
corpus = [json.loads(l) for l in open(sys.argv[3])]
at = {row["id"]: i for i, row in enumerate(corpus)}
questions = [json.loads(l) for l in open(sys.argv[4])][:n]
reader = load_reader(threads=threads)
warm = reader.read("warm up?", [Passage("w", "w", "a warm up passage.")])
cpu = wall = 0.0
out = []
for q in questions:
    first = at[q["supporting_ids"][0]]
    more = [corpus[(first + k) % len(corpus)]["id"] for k in (7, 13, 29)]
    ids = list(dict.fromkeys(q["supporting_ids"] + more))[:5]
    rows = [corpus[at[i]] for i in ids]
    passages = [Passage(r["id"], r["title"], r["text"]) for r in rows]
    reader._kept.clear()
    c, w = time.process_time(), time.perf_counter()
    reading = reader.read(q["question"], passages)
    cpu += time.process_time() - c
    wall += time.perf_counter() - w
    out.append([[s.passage_id, s.start, s.end, s.kind, s.score] for s in reading.spans[:5]])
said = {"runtime": reader.runtime, "cpu_s": cpu / len(questions), "wall_s": wall / len(questions)}
print(json.dumps({**said, "spans": out}))
"""


def measure(runtime: str, n: int, threads: int) -> dict:
    env = {**os.environ, "RAGTEAM_READER_RUNTIME": runtime, "OMP_NUM_THREADS": str(threads)}
    args = [str(n), str(threads), str(DATA / "corpus.jsonl"), str(DATA / "dev300.jsonl")]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(torch: dict, onnx: dict) -> dict:
    same_best = sum(
        a[:1] and b[:1] and a[0][:4] == b[0][:4]
        for a, b in zip(torch["spans"], onnx["spans"], strict=True)
    )
    same_top = sum(
        [s[:4] for s in a] == [s[:4] for s in b]
        for a, b in zip(torch["spans"], onnx["spans"], strict=True)
    )
    worst = max(
        (
            abs(x[4] - y[4])
            for a, b in zip(torch["spans"], onnx["spans"], strict=True)
            for x, y in zip(a, b, strict=False)
            if x[:4] == y[:4]
        ),
        default=0.0,
    )
    return {"same_best": same_best, "same_top5": same_top, "max_score_diff": worst}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    runs = {r: measure(r, args.n, args.threads) for r in ("torch", "onnx")}
    result = {
        "questions": args.n,
        "threads": args.threads,
        **{f"{r}_cpu_s": round(runs[r]["cpu_s"], 4) for r in runs},
        **{f"{r}_wall_s": round(runs[r]["wall_s"], 4) for r in runs},
        **compare(runs["torch"], runs["onnx"]),
    }
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
