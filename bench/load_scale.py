"""Loading an index to search it, with its BM25 and FAISS files read into memory or mapped
(issue 70: "loading by mmap where that is measured better"): each way in a fresh process,
the load's seconds and its own (anonymous) memory, then 200 searches (8 words of a random
passage, one at a time, the first timed apart: a mapped file is read from disk as it is first
touched), the memory after them and the mapped file pages resident (shared: the page
cache's).

    python bench/load_scale.py --index /tmp/m1/ix --out bench/out/load-scale-1m.json

The index is any built one (a million passages: `bench/folder_scale.py`'s folder of 28,400
files of 30 paragraphs, synced with `ragteam index sync DIR --out IX --retriever bm25`). Pass
`--drop-caches` (root) to drop the page cache before each process: a mapped load's first
searches then read from disk as a freshly booted server's would."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, random, resource, sys, time

def rss_mb(field="RssAnon:"):
    # RssAnon: memory of this process's own; a mapped file's pages (RssFile) are the page
    # cache's, shared with every process that maps the same file (each `serve --workers`)
    with open("/proc/self/status") as f:
        line = next(l for l in f if l.startswith(field))
    return round(int(line.split()[1]) / 1024)

from ragteam.retrieval import load_index
before = rss_mb()
began = time.perf_counter()
index = load_index(sys.argv[1], mmap=sys.argv[2] == "mmap")
load = time.perf_counter() - began
loaded = rss_mb()
rng = random.Random(7)
picks = rng.sample(range(len(index.passages)), 200)
queries = []
for n in picks:
    words = index.passages[n].text.split()
    start = rng.randrange(max(1, len(words) - 8))
    queries.append(" ".join(words[start:start + 8]))
times = []
for query in queries:
    began = time.perf_counter()
    index.retrieve(query, 10)
    times.append((time.perf_counter() - began) * 1000)
first, rest = times[0], sorted(times[1:])
print(json.dumps({
    "mode": sys.argv[2], "passages": len(index.passages), "load_s": round(load, 2),
    "rss_before_mb": before, "rss_loaded_mb": loaded, "rss_searched_mb": rss_mb(),
    "file_searched_mb": rss_mb("RssFile:"),
    "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    "first_ms": round(first, 1), "p50_ms": round(rest[len(rest) // 2], 2),
    "p95_ms": round(rest[int(len(rest) * 0.95)], 2),
}))
"""


def probe(index: Path, mode: str, drop_caches: bool) -> dict[str, object]:
    if drop_caches:
        subprocess.run(["sync"], check=True)
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    found = subprocess.run(
        [sys.executable, "-c", PROBE, str(index), mode], capture_output=True, text=True, check=True
    )
    return json.loads(found.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--drop-caches", action="store_true", help="as root: a cold page cache")
    args = parser.parse_args()
    rows = [probe(args.index, mode, args.drop_caches) for mode in ("read", "mmap", "read", "mmap")]
    print(
        "| load | passages | seconds | own memory loaded / after 200 searches (MB) "
        "| mapped file pages after | peak RSS | first search | p50 / p95 |\n"
        "|---|---|---|---|---|---|---|---|"
    )
    for r in rows:
        print(
            f"| {r['mode']} | {r['passages']:,} | {r['load_s']} | {r['rss_loaded_mb']} / "
            f"{r['rss_searched_mb']} | {r['file_searched_mb']} MB | {r['peak_mb']} MB | "
            f"{r['first_ms']} ms | {r['p50_ms']} / {r['p95_ms']} ms |"
        )
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
