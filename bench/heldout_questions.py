"""The held-out questions of a `train build` folder as an evaluation dataset: questions no
adapter trained on and no test set holds, for choosing between adapters or inference options
end to end without a test set.

    python bench/heldout_questions.py bench/out/traj-v4 --corpus bench/out/train_all_corpus.jsonl \
        --out bench/out/heldout-open.jsonl

Open-format questions of the validation split (HotpotQA, MuSiQue, StrategyQA), with their gold
answers and, as `supporting_ids`, the corpus passages titled as their gold paragraphs. Evaluate
them over an index of the same training corpus (`bench/out/indexes/train-all-hybrid`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("data", type=Path, help="a `train build` folder")
    parser.add_argument("--corpus", type=Path, required=True, help="the corpus it was built on")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    from ragteam.common.atomic import write_jsonl

    ids_by_title: dict[str, list[str]] = {}
    with args.corpus.open(encoding="utf-8") as handle:
        for line in handle:
            passage = json.loads(line)
            ids_by_title.setdefault(passage["title"], []).append(passage["id"])
    rows = []
    with (args.data / "items.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            item = json.loads(line)
            if item["split"] != "validation" or item["format"] != "open":
                continue
            support = [i for t in item["gold_titles"] for i in ids_by_title.get(t, [])]
            row = {"id": item["id"], "question": item["posed"], "answers": item["answers"]}
            rows.append(row | ({"supporting_ids": support} if support else {}))
    write_jsonl(args.out, rows)
    print(f"wrote {len(rows)} held-out questions to {args.out}")


if __name__ == "__main__":
    main()
