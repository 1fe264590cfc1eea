"""A million passages at load: what holding every passage costs against reading each when asked.

    python bench/passages_scale.py --n 1000000 --out bench/out/passages-scale-1m.json

Writes N synthetic passages (60 words from a Zipf vocabulary, ids `doc-D#K`, 20 a document,
with a page locator) as an index's `passages.jsonl` (`write_passages`), then, each in a fresh
process: `held` reads every line into a list of Passages (what `load_index` did before) and
builds its id table; `lazy` is `PassageFile.scanned` (line starts by a chunked scan) and its id
table on first lookup. Reported: seconds to load, the process's RSS growth, and the time of 1,000
lookups by id and of the neighbours a citation view reads."""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import random
import resource
import tempfile
import time
from pathlib import Path
from typing import Any


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def make(path: Path, n: int, seed: int = 0) -> None:
    from ragteam.retrieval.passage_file import write_passages
    from ragteam.types import Locator, Passage

    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(50_000)]
    cumulative = list(itertools.accumulate(1 / (i + 1) for i in range(len(vocab))))

    def passages():  # noqa: ANN202
        for i in range(n):
            doc = f"doc-{i // 20}"
            text = " ".join(rng.choices(vocab, cum_weights=cumulative, k=60))
            where = Locator(source=f"{doc}.pdf", page=i % 20 + 1)
            yield Passage(f"{doc}#{i % 20}", doc, text, doc, locator=where)

    write_passages(path, passages())


def _measure(kind: str, path: str, n: int, out: Any) -> None:
    from ragteam.retrieval.passage_file import PassageFile, passage_of

    before = _rss_mb()
    started = time.perf_counter()
    if kind == "held":
        with open(path, "rb") as handle:
            held = [passage_of(json.loads(line)) for line in handle]
        table = {p.id: i for i, p in enumerate(held)}
        loaded = time.perf_counter() - started

        def find(pid: str) -> Any:
            return held[table[pid]]
    else:
        lazy = PassageFile.scanned(Path(path))
        loaded = time.perf_counter() - started
        first = time.perf_counter()
        lazy.position("doc-0#0")
        table_s = time.perf_counter() - first

        def find(pid: str) -> Any:
            return lazy[lazy.position(pid)]

    rng = random.Random(1)
    asked = [f"doc-{(i := rng.randrange(n)) // 20}#{i % 20}" for _ in range(1000)]
    started = time.perf_counter()
    for pid in asked:
        assert find(pid).id == pid
    lookups = time.perf_counter() - started
    result = {"kind": kind, "load_s": round(loaded, 2), "rss_growth_mb": round(_rss_mb() - before)}
    result["lookup_ms"] = round(lookups, 3)  # seconds for 1,000 = ms each
    if kind == "lazy":
        result["id_table_s"] = round(table_s, 2)
    out.put(result)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "passages.jsonl"
        started = time.perf_counter()
        make(path, args.n)
        written = {"n": args.n, "file_mb": round(path.stat().st_size / 2**20),
                   "write_s": round(time.perf_counter() - started, 1)}  # fmt: skip
        results = [written]
        ctx = multiprocessing.get_context("spawn")
        for kind in ("lazy", "held"):
            queue = ctx.Queue()
            proc = ctx.Process(target=_measure, args=(kind, str(path), args.n, queue))
            proc.start()
            results.append(queue.get())
            proc.join()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
