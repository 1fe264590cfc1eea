"""How a hybrid index fuses its BM25 and dense rankings: which rule puts a question's gold
passage in the top k most often, on held training questions (never a benchmark's).

    python bench/fusion.py held --groups GROUPS.jsonl.gz
    python bench/fusion.py benchmarks --hotpotqa-index bench/out/indexes/hybrid \
        --documents /tmp/docqa4       # the adopted constant against 60, measured afterwards

The folder is every passage of the reader's held training groups (`ragteam train reader
--groups`), once each: Wikipedia paragraphs, and passages of held documents (tables, printed
PDFs, prose), each document's gold passage among its own distractors. Each held question with
an answer is searched in it by BM25 and by the shipped dense encoder (exact inner product),
top 50 each, and the two rankings are fused by each rule below. Reported: recall at 1 and at k
(a gold passage, one holding the answer span, among them), by family, and each rule paired
with the shipped one (`rrf60`) by a bootstrap over questions.

The rules, fixed before anything was measured: reciprocal rank fusion with the shipped
constant (60) and a top-heavy one (5), and interleaving (the two rankings taken in turn, BM25
first, each passage once)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np
from doc_answers import bootstrap

from ragteam.reader.training.groups import groups_made_with, load_groups
from ragteam.retrieval.bm25 import BM25Retriever
from ragteam.retrieval.encoder_registry import make_encoder
from ragteam.retrieval.encoders import EncoderSpec
from ragteam.types import Passage

DEPTH = 50
Ranking = list[int]


def rrf(constant: int) -> Callable[[Ranking, Ranking], Ranking]:
    def fuse(a: Ranking, b: Ranking) -> Ranking:
        score: dict[int, float] = {}
        for ranking in (a, b):
            for rank, i in enumerate(ranking):
                score[i] = score.get(i, 0.0) + 1.0 / (constant + rank + 1)
        return sorted(score, key=lambda i: (-score[i], i))

    return fuse


def interleave(a: Ranking, b: Ranking) -> Ranking:
    out: dict[int, None] = {}
    for pair in zip(a, b, strict=False):
        out.update(dict.fromkeys(pair))
    out.update(dict.fromkeys(a + b))
    return list(out)


RULES = {"rrf60": rrf(60), "rrf5": rrf(5), "interleave": interleave}


def benchmarks(hotpotqa_index: Path, documents: Path, constants: tuple[int, ...]) -> None:
    """HotpotQA dev300 all-gold recall and the document benchmark's gold locator at 1 and 5,
    under each fusion constant (the index's searches, only the constant changed)."""
    import json

    from doc_qa import at_gold
    from retrieval_recall import recall

    import ragteam.retrieval.index as index_module
    from ragteam.retrieval import load_index

    dev = Path("bench/data/hotpotqa/dev300.jsonl").read_text().splitlines()
    hotpotqa = [json.loads(x) for x in dev]
    asked = [json.loads(x) for x in (documents / "questions.jsonl").read_text().splitlines()]
    asked = [q for q in asked if q["format"] != "none"]
    at5: dict[int, list[float]] = {}
    for constant in constants:
        index_module.RRF_K = constant
        print(f"RRF {constant}: HotpotQA {recall(load_index(hotpotqa_index), hotpotqa, 'hybrid')}")
        index = load_index(documents / "ix")
        found = [index.retrieve(q["question"], 5) for q in asked]
        at5[constant] = [
            float(any(at_gold(h.locator, q["gold"]) for h in hits))
            for q, hits in zip(asked, found, strict=True)
        ]
        pairs = list(zip(asked, found, strict=True))
        at1 = [float(bool(h) and at_gold(h[0].locator, q["gold"])) for q, h in pairs]
        print(f"RRF {constant}: documents @1 {np.mean(at1):.3f} @5 {np.mean(at5[constant]):.3f}")
    first, *rest = constants
    for constant in rest:
        mean, low, high = bootstrap([a - b for a, b in zip(at5[constant], at5[first], strict=True)])
        print(
            f"documents @5, RRF {constant} - RRF {first}: {mean:+.3f} ({low:+.3f} to {high:+.3f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    h = sub.add_parser("held")
    h.add_argument("--groups", type=Path, required=True)
    h.add_argument("--k", type=int, default=5)
    b = sub.add_parser("benchmarks")
    b.add_argument("--hotpotqa-index", type=Path, required=True)
    b.add_argument("--documents", type=Path, required=True, help="bench/doc_qa.py's work folder")
    args = parser.parse_args()
    if args.verb == "benchmarks":
        benchmarks(args.hotpotqa_index, args.documents, (60, 5))
        return
    held = load_groups(args.groups, groups_made_with(args.groups)).held
    texts = list(dict.fromkeys(t for g in held for t in g.texts))
    where = {t: n for n, t in enumerate(texts)}
    asked = [g for g in held if g.label == "span" and any(g.spans)]
    print(f"{len(texts)} passages, {len(asked)} questions with a gold passage")
    bm25 = BM25Retriever.build([Passage(f"p{n}", "", t) for n, t in enumerate(texts)])
    encoder = make_encoder(EncoderSpec())
    vectors = np.asarray(encoder.encode(texts), dtype=np.float32)
    queries = np.asarray(encoder.encode([g.question for g in asked]), dtype=np.float32)
    hits: dict[str, list[float]] = {name: [] for name in ["bm25", "dense", *RULES]}
    top1: dict[str, list[float]] = {name: [] for name in hits}
    families = []
    for g, q in zip(asked, queries, strict=True):
        gold = {where[t] for t, spans in zip(g.texts, g.spans, strict=True) if spans}
        sparse = [i for i, _ in bm25.search(g.question, DEPTH)]
        dense = [int(i) for i in np.argsort(-(vectors @ q))[:DEPTH]]
        rankings = {"bm25": sparse, "dense": dense}
        rankings |= {name: rule(sparse, dense) for name, rule in RULES.items()}
        for name, ranking in rankings.items():
            hits[name].append(float(bool(gold & set(ranking[: args.k]))))
            top1[name].append(float(bool(ranking) and ranking[0] in gold))
        families.append("documents" if g.source.startswith("doc") else "wikipedia")
    print(f"| rule | recall@1 | recall@{args.k} | documents @{args.k} | wikipedia @{args.k} |")
    print("|---|---|---|---|---|")
    for name in hits:
        by = {
            f: np.mean([h for h, x in zip(hits[name], families, strict=True) if x == f])
            for f in ("documents", "wikipedia")
        }
        print(
            f"| {name} | {np.mean(top1[name]):.3f} | {np.mean(hits[name]):.3f} | "
            f"{by['documents']:.3f} | {by['wikipedia']:.3f} |"
        )
    for name in RULES:
        if name == "rrf60":
            continue
        diffs = [a - b for a, b in zip(hits[name], hits["rrf60"], strict=True)]
        mean, low, high = bootstrap(diffs)
        print(f"{name} - rrf60 recall@{args.k}: {mean:+.3f} ({low:+.3f} to {high:+.3f})")


if __name__ == "__main__":
    main()
