"""Encoding speed and retrieval quality: PyTorch vs ONNX vs ONNX int8 (same MiniLM weights).

    python bench/encode_speed.py --data bench/data/hotpotqa --out bench/out/encode-speed.json

Encodes every paragraph of the HotpotQA corpus with each backend (one warm-up batch first, not
timed), then builds a flat index per backend and measures all-gold recall@10 over dev300 and
how much each top-10 agrees with PyTorch's.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from ragteam.retrieval.corpus import load_passages
from ragteam.retrieval.dense import DenseSettings, build_faiss, passage_text
from ragteam.retrieval.encoder_registry import make_encoder
from ragteam.retrieval.encoders import LOCAL_BACKENDS, EncoderSpec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("bench/data/hotpotqa"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--backends", default=",".join(LOCAL_BACKENDS))
    args = parser.parse_args()
    passages = load_passages(args.data / "corpus.jsonl")
    texts = [passage_text(p) for p in passages]
    questions = [json.loads(line) for line in (args.data / "dev300.jsonl").open()]
    results, tops = {}, {}
    for backend in args.backends.split(","):
        encoder = make_encoder(EncoderSpec(backend))
        encoder.encode(texts[:64])  # warm-up: export/quantize happen here, once
        started = time.perf_counter()
        vectors = encoder.encode(texts)
        seconds = time.perf_counter() - started
        index = build_faiss(vectors, DenseSettings())
        queries = encoder.encode([q["question"] for q in questions])
        _, ids = index.search(queries, 10)
        tops[backend] = ids
        gold_hits = [
            set(q["supporting_ids"]) <= {passages[i].doc_id for i in row}
            for q, row in zip(questions, ids, strict=True)
        ]
        results[backend] = {
            "passages": len(texts),
            "seconds": round(seconds, 2),
            "passages_per_s": round(len(texts) / seconds, 1),
            "recall@10": round(float(np.mean(gold_hits)), 4),
        }
        print(backend, results[backend], flush=True)
    if "torch" in tops:
        for backend, ids in tops.items():
            overlap = np.mean(
                [len(set(a) & set(b)) / 10 for a, b in zip(tops["torch"], ids, strict=True)]
            )
            results[backend]["top10_overlap_with_torch"] = round(float(overlap), 4)
            base = results["torch"]["passages_per_s"]
            results[backend]["speedup"] = round(results[backend]["passages_per_s"] / base, 2)
    args.out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
