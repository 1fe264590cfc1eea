"""How many searches `read` makes, chosen on HotpotQA *training* questions (never dev): for
each setting of `read`'s `k`, `hops` and `bridges`, the share of questions whose two gold
passages were both read and the answer's token F1 (on all, and on the questions the shipped
reader held out of its training, `held_out(id, 0.1)`), through the strategy itself.

    ragteam index build bench/data/train/train_corpus.jsonl --out /tmp/train-ix \\
        --retriever hybrid --passage-words 0
    python bench/read_hops.py --questions bench/data/train/hotpotqa_train.jsonl \\
        --index /tmp/train-ix --settings k=5 k=10 hops=2,bridges=1 hops=2 hops=2,bridges=3

docs/benchmarks.md §45."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from ragteam import answer
from ragteam.common.metrics import f1_score
from ragteam.reader.training.data import held_out
from ragteam.retrieval import load_index


def options(setting: str) -> dict[str, int]:
    return {k: int(v) for k, v in (part.split("=") for part in setting.split(","))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--settings", nargs="+", default=["k=5", "hops=2"])
    args = parser.parse_args()
    index = load_index(args.index)
    titles = {}
    rows = [json.loads(x) for x in args.questions.read_text(encoding="utf-8").splitlines() if x]
    print("| setting | both gold read | passages read | F1 | F1, held questions | s/q |")
    print("|---|---|---|---|---|---|")
    for setting in args.settings:
        both = f1 = held_f1 = passages = 0.0
        held = 0
        started = time.perf_counter()
        for r in rows:
            result = answer(
                r["question"],
                index=index,
                strategy="read",
                options=options(setting),
                support="off",
            )
            read = [s for s in result.trace.steps if s.kind == "read"][-1].input["passages"]
            for pid in read:
                titles.setdefault(pid, index.passage(pid).title)
            gold = {t for t, _ in r["supporting_facts"]}
            both += gold <= {titles[pid] for pid in read}
            passages += len(read)
            score = f1_score(result.text, r["answers"])
            f1 += score
            if held_out(r["id"], 0.1):
                held += 1
                held_f1 += score
        n = len(rows)
        print(
            f"| {setting} | {both / n:.3f} | {passages / n:.1f} | {f1 / n:.3f} | "
            f"{held_f1 / max(1, held):.3f} ({held}) | {(time.perf_counter() - started) / n:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
