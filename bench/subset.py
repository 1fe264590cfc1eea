"""Write a fixed, seeded sample of a JSONL dataset (for benchmarks too slow for all of it).

    python bench/subset.py bench/data/hotpotqa/dev300.jsonl --n 100 --seed 0 \
        --out bench/out/dev300-seed0-100.jsonl
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data", type=Path)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    lines = [line for line in args.data.read_text(encoding="utf-8").splitlines() if line.strip()]
    chosen = sorted(random.Random(args.seed).sample(range(len(lines)), min(args.n, len(lines))))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(lines[i] + "\n" for i in chosen), encoding="utf-8")
    print(f"{len(chosen)} of {len(lines)} lines -> {args.out}")


if __name__ == "__main__":
    main()
