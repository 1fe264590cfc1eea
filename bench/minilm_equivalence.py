"""The `torch` encoder in plain torch (`ragteam.minilm.bert`) against sentence-transformers'
all-MiniLM-L6-v2, on corpus paragraphs and awkward texts (issue 89: the encoder loads without
sentence-transformers; its vectors must stay the ones indexes and caches hold).

    python bench/minilm_equivalence.py --corpus ../shared/data/train/train_corpus.jsonl --n 300

Prints the largest absolute difference, the smallest cosine, and each model's load seconds."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--n", type=int, default=300)
    args = parser.parse_args()
    from ragteam.retrieval.encoders import embedding_model_dir, max_seq_length

    with args.corpus.open(encoding="utf-8") as rows:
        texts = [json.loads(line)["text"] for line, _ in zip(rows, range(args.n), strict=False)]
    texts += ["", "a", "hello world", "x " * 600, "Ünïcödé and emoji 🙂 text"]
    folder = embedding_model_dir()
    began = time.perf_counter()
    from ragteam.minilm.bert import MiniLM

    ours_model = MiniLM(folder, max_seq_length(folder))
    ours_load = time.perf_counter() - began
    began = time.perf_counter()
    from sentence_transformers import SentenceTransformer

    reference_model = SentenceTransformer(str(folder), device="cpu")
    reference_load = time.perf_counter() - began
    reference = reference_model.encode(
        texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True,
        show_progress_bar=False,
    )  # fmt: skip
    ours = np.concatenate([ours_model.embed(texts[i : i + 32]) for i in range(0, len(texts), 32)])
    loads = {"plain_torch": round(ours_load, 2), "sentence_transformers": round(reference_load, 2)}
    found = {
        "texts": len(texts),
        "largest_abs_difference": float(np.abs(reference - ours).max()),
        "smallest_cosine": float((reference * ours).sum(axis=1).min()),
        "load_s": loads,
    }
    print(json.dumps(found))


if __name__ == "__main__":
    main()
