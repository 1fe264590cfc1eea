"""Index types at scale: flat / HNSW / IVF-PQ (FAISS) and BM25 in memory vs memory-mapped.

    python bench/index_scale.py dense --n 1000000 --out bench/out/index-scale-1m.json
    python bench/index_scale.py dense --vectors hotpot --nlist 64 \
        --out bench/out/index-scale-hotpot.json
    python bench/index_scale.py bm25 --n 1000000 --out bench/out/bm25-scale-1m.json

`dense --n N`: N synthetic unit vectors (2,000 topics, 48 latent dims, 384 dims; generated, not
downloaded: encoding a million real passages takes hours on 2 cores). `--vectors hotpot`: the
HotpotQA paragraphs encoded by MiniLM, queries the dev300 questions. Each index type is built in
its own process: build seconds, memory the index holds after the build (RSS growth) and
the process's peak, size on disk, load time and RSS growth (read vs mmap), latency of single
queries (p50/p95) and recall@10 against the flat index.
`bm25 --n N`: N synthetic passages of 60 words drawn from a Zipf vocabulary of 50,000 words.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

DIM, LATENT, TOPICS, QUERIES = 384, 48, 2000, 200


def synthetic_vectors(n: int, seed: int = 0) -> np.ndarray:
    """Unit vectors with the structure of text embeddings: 2,000 topics in a 48-dim latent
    space, projected to 384 dims, plus a little isotropic noise. (Pure 384-dim Gaussian noise
    has no near neighbours worth finding: every approximate index fails on it.)"""
    rng = np.random.default_rng(seed)
    projection = np.random.default_rng(123).normal(size=(LATENT, DIM)).astype("float32")
    centres = np.random.default_rng(7).normal(size=(TOPICS, LATENT)).astype("float32")
    x = np.empty((n, DIM), dtype="float32")
    for start in range(0, n, 100_000):  # in blocks: the temporaries stay small
        m = min(n, start + 100_000) - start
        z = centres[rng.integers(0, TOPICS, m)] + 0.7 * rng.normal(size=(m, LATENT))
        block = z.astype("float32") @ projection
        block += 0.05 * np.sqrt(LATENT) * rng.normal(size=(m, DIM)).astype("float32")
        x[start : start + m] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return x


def hotpot_vectors() -> tuple[np.ndarray, np.ndarray]:
    from ragteam.retrieval.corpus import load_passages
    from ragteam.retrieval.dense import encode, passage_text

    data = Path("bench/data/hotpotqa")
    passages = load_passages(data / "corpus.jsonl")
    questions = [json.loads(line)["question"] for line in (data / "dev300.jsonl").open()]
    return encode([passage_text(p) for p in passages]), encode(questions)


def vectors_for(source: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    if source == "hotpot":
        return hotpot_vectors()
    return synthetic_vectors(n), synthetic_vectors(QUERIES, seed=1)


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mib() -> float:
    """Resident memory now (pages in RAM, mapped files included)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def one_kind(kind: str, source: str, n: int, nlist: int, result: Any) -> None:
    """Build, save, reload (read and mmap) and query one index type; runs in a child."""
    import faiss

    from ragteam.retrieval.dense import DenseSettings, build_faiss, tune

    data, queries = vectors_for(source, n)
    base = rss_mib()
    settings = DenseSettings(kind=kind, nlist=nlist)
    started = time.perf_counter()
    index = build_faiss(data, settings)
    build = time.perf_counter() - started
    held = rss_mib() - base
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "index.faiss")
        faiss.write_index(index, path)
        size = Path(path).stat().st_size
        del index
        loads = {}
        for mode, flags in (("read", 0), ("mmap", faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)):
            before = rss_mib()
            started = time.perf_counter()
            loaded = faiss.read_index(path, flags)
            loads[mode] = time.perf_counter() - started
            loads[f"{mode}_rss_mib"] = rss_mib() - before
            tune(loaded, settings)
            latencies, found = [], []
            for q in queries:
                started = time.perf_counter()
                _, ids = loaded.search(q[None, :], 10)
                latencies.append(time.perf_counter() - started)
                found.append(ids[0].tolist())
            if mode == "read":
                read_latencies, read_found = latencies, found
    latencies_ms = sorted(1000 * x for x in read_latencies)
    result.update(
        kind=kind,
        n=len(data),
        build_s=round(build, 2),
        index_rss_mib=round(held, 1),
        peak_rss_mib=round(peak_mib(), 1),
        size_mib=round(size / 2**20, 1),
        load_read_s=round(loads["read"], 3),
        load_mmap_s=round(loads["mmap"], 3),
        load_read_rss_mib=round(loads["read_rss_mib"], 1),
        load_mmap_rss_mib=round(loads["mmap_rss_mib"], 1),
        query_p50_ms=round(statistics.median(latencies_ms), 3),
        query_p95_ms=round(latencies_ms[int(0.95 * len(latencies_ms)) - 1], 3),
        mmap_latency_p50_ms=round(1000 * statistics.median(latencies), 3),
        found=read_found,
    )


def dense(args: argparse.Namespace) -> dict[str, Any]:
    rows = {}
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        for kind in ["flat", *[k for k in args.kinds.split(",") if k != "flat"]]:
            result = manager.dict()
            child = context.Process(
                target=one_kind, args=(kind, args.vectors, args.n, args.nlist, result)
            )
            child.start()
            child.join()
            rows[kind] = dict(result)
            print(kind, {k: v for k, v in rows[kind].items() if k != "found"}, flush=True)
    truth = rows["flat"]["found"]
    for row in rows.values():
        hits = [len(set(a) & set(b)) / 10 for a, b in zip(truth, row.pop("found"), strict=True)]
        row["recall@10_vs_flat"] = round(float(np.mean(hits)), 4)
    return rows


def bm25(args: argparse.Namespace) -> dict[str, Any]:
    from ragteam.retrieval.bm25 import BM25Retriever, write
    from ragteam.types import Passage

    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(50_000)]
    ranks = np.minimum(rng.zipf(1.2, size=(args.n, 60)), len(vocab)) - 1
    passages = [
        Passage(str(i), "", " ".join(vocab[r] for r in row), str(i)) for i, row in enumerate(ranks)
    ]
    queries = [" ".join(vocab[r] for r in rng.integers(0, 2000, 4)) for _ in range(QUERIES)]
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        write(passages, Path(tmp), "none")
        out: dict[str, Any] = {"n": args.n, "build_s": round(time.perf_counter() - started, 1)}
        out["size_mib"] = round(sum(p.stat().st_size for p in Path(tmp).rglob("*")) / 2**20, 1)
        for mode in ("read", "mmap"):
            before = rss_mib()
            started = time.perf_counter()
            loaded = BM25Retriever.load(Path(tmp), passages, "none", mmap=mode == "mmap")
            load = time.perf_counter() - started
            grown = rss_mib() - before
            latencies = []
            for q in queries:
                started = time.perf_counter()
                loaded.search(q, 10)
                latencies.append(1000 * (time.perf_counter() - started))
            latencies.sort()
            after_queries = rss_mib() - before
            del loaded  # the next mode starts without this one in memory
            out[mode] = {
                "load_s": round(load, 3),
                "rss_growth_at_load_mib": round(grown, 1),
                "rss_growth_after_queries_mib": round(after_queries, 1),
                "query_p50_ms": round(statistics.median(latencies), 2),
                "query_p95_ms": round(latencies[int(0.95 * len(latencies)) - 1], 2),
            }
            print(mode, out[mode], flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["dense", "bm25"])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--vectors", choices=["synthetic", "hotpot"], default="synthetic")
    parser.add_argument("--kinds", default="flat,hnsw,ivfpq", help="flat is always built")
    parser.add_argument("--nlist", type=int, default=0, help="IVF lists (0: 4*sqrt(n))")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    report = dense(args) if args.what == "dense" else bm25(args)
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
