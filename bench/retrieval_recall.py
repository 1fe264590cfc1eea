"""Benchmark 2: index build time and all-gold-paragraph recall@k over HotpotQA.

    python bench/retrieval_recall.py --data bench/data/hotpotqa --out bench/out/indexes

Recall@k: share of questions whose gold paragraphs (`supporting_ids`) are all in the top k.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from ragteam.retrieval import build_index, load_index

KS = (2, 5, 10, 20)


def recall(index, questions: list[dict], method: str) -> dict[int, float]:
    hits = dict.fromkeys(KS, 0)
    for q in questions:
        gold = set(q["supporting_ids"])
        found = [p.doc_id for p in index.retrieve(q["question"], max(KS), method)]
        for k in KS:
            hits[k] += gold <= set(found[:k])
    return {k: hits[k] / len(questions) for k in KS}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=Path("bench/data/hotpotqa"))
    parser.add_argument("--out", type=Path, default=Path("bench/out/indexes"))
    parser.add_argument("--passage-words", type=int, default=0)
    parser.add_argument("--rebuild", action="store_true", help="rebuild existing indexes")
    args = parser.parse_args()
    questions = [json.loads(line) for line in (args.data / "dev300.jsonl").open()]
    build_times = {}
    for kind in ("bm25", "dense", "hybrid"):
        if args.rebuild or not (args.out / kind / "manifest.json").exists():
            build_index(
                args.data / "corpus.jsonl",
                args.out / kind,
                retriever=kind,
                passage_words=args.passage_words,
            )
        build_times[kind] = load_index(args.out / kind).manifest["build_seconds"]
    nostem = args.out / "bm25-nostem"
    if args.rebuild or not (nostem / "manifest.json").exists():
        build_index(
            args.data / "corpus.jsonl",
            nostem,
            retriever="bm25",
            passage_words=args.passage_words,
            bm25_stemmer="none",
        )
    index = load_index(args.out / "hybrid")
    print(
        f"{len(index.passages)} passages, {len(questions)} questions, "
        f"passage_words={args.passage_words}"
    )
    print("| retriever | build s | " + " | ".join(f"R@{k}" for k in KS) + " | query ms |")
    print("|---|---|" + "---|" * (len(KS) + 1))
    for method in ("bm25", "dense", "hybrid"):
        started = time.perf_counter()
        scores = recall(index, questions, method)
        per_query = (time.perf_counter() - started) / len(questions) * 1000
        cells = " | ".join(f"{scores[k]:.3f}" for k in KS)
        print(f"| {method} | {build_times[method]:.1f} | {cells} | {per_query:.1f} |")
    plain = load_index(nostem)
    cells = " | ".join(f"{v:.3f}" for v in recall(plain, questions, "bm25").values())
    print(f"| bm25, no stemming | {plain.manifest['build_seconds']:.1f} | {cells} | - |")


if __name__ == "__main__":
    main()
