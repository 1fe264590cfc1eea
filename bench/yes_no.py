"""`read` on the yes/no questions of HotpotQA dev300 (gold "yes" or "no"): how many it answers
right, one row per question to OUT.

    python bench/yes_no.py --index bench/out/indexes/hybrid --out /tmp/yes_no.jsonl"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragteam import answer
from ragteam.common.metrics import match
from ragteam.retrieval import load_index

QUESTIONS = Path(__file__).parent / "data" / "hotpotqa" / "dev300.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    index = load_index(args.index)
    rows = [json.loads(x) for x in QUESTIONS.read_text().splitlines() if x]
    rows = [r for r in rows if r["answers"][0].lower() in ("yes", "no")]
    right = 0.0
    with args.out.open("w", encoding="utf-8") as out:
        for row in rows:
            said = answer(row["question"], index=index, strategy="read")
            right += (m := match(said.text, row["answers"]))
            out.write(json.dumps({"id": row["id"], "answer": said.text, "match": m}) + "\n")
    print(f"{args.out}: {right:.0f} of {len(rows)} yes/no questions right")


if __name__ == "__main__":
    main()
