"""Index segments at a million passages (issue 89): what a changed, a deleted and 1,000 changed
files cost a BM25 folder index, and whether the segmented index ranks as a fresh one.

    python bench/segments_scale.py --corpus ../shared/data/train/train_corpus.jsonl \\
        --files 28400 --paragraphs 30 --work /tmp/seg [--reuse]

The folder is `bench/folder_scale.py`'s (28,400 files of 30 paragraphs: about 1M passages).
Every sync runs as its own process, timed with its peak RSS (`folder_scale.timed_sync`): the
first sync (skipped with `--reuse` when the index is there), then one file changed (a line
appended), one file deleted; then an index written fresh from the same folder (`index build`,
the same cache: conversions kept, every passage tokenized), and 200 queries (8 words of random
passages) searched on both: the top 10 compared, ids in order and scores within 1e-6, and each
index's load time and search latency. The segmented index is also loaded to answer in a fresh
process (issue 89 item 2): seconds to ready, peak RSS, the first `read` answer. Then `--many`
files changed (1,000), and last `index sync --merge`, each timed. `--edits N`: N more one-file
syncs after the deletion, before the comparison (one that would make a ninth segment folds the
newest: `ragteam.retrieval.segment_sync`). A sync's columns: seconds,
peak MB, passages embedded, segments after it (0: written whole). Results as JSON lines on
stdout."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from folder_scale import make_folder, timed_sync  # noqa: E402

COMPARE = """
import json, random, sys, time
from ragteam.retrieval import load_index
began = time.perf_counter()
seg = load_index(sys.argv[1])
seg_load = time.perf_counter() - began
began = time.perf_counter()
fresh = load_index(sys.argv[2])
fresh_load = time.perf_counter() - began
rng = random.Random(7)
queries = []
for _ in range(200):
    words = fresh.passages[rng.randrange(len(fresh.passages))].text.split()
    start = rng.randrange(max(1, len(words) - 8))
    queries.append(" ".join(words[start:start + 8]))
same, worst, times = 0, 0.0, {"segmented": [], "fresh": []}
for query in queries:
    found = {}
    for name, index in (("segmented", seg), ("fresh", fresh)):
        began = time.perf_counter()
        hits = index.searchers["bm25"].search(query, 10)
        times[name].append((time.perf_counter() - began) * 1000)
        found[name] = [(index.passages[i].id, s) for i, s in hits]
    a, b = found["segmented"], found["fresh"]
    if [i for i, _ in a] == [i for i, _ in b]:
        same += 1
        worst = max([worst] + [abs(x - y) for (_, x), (_, y) in zip(a, b)])
for name in times:
    times[name].sort()
print(json.dumps({
    "queries": len(queries), "same_top10": same, "largest_score_difference": worst,
    "passages": [len(seg.passages), len(fresh.passages)],
    "load_s": [round(seg_load, 2), round(fresh_load, 2)],
    "p50_ms": [round(times["segmented"][100], 1), round(times["fresh"][100], 1)],
    "p95_ms": [round(times["segmented"][190], 1), round(times["fresh"][190], 1)],
}))
"""


READY = """
import json, resource, sys, time
began = time.perf_counter()
from ragteam import answer
from ragteam.retrieval import load_index
index = load_index(sys.argv[1])
ready = time.perf_counter() - began
rss_ready = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
began = time.perf_counter()
first = answer(sys.argv[2], index=index, strategy="read")
took = time.perf_counter() - began
print(json.dumps({
    "ready_s": round(ready, 2), "peak_mb_ready": round(rss_ready),
    "first_answer_s": round(took, 2),
    "peak_mb_answered": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    "answer": first.text[:60],
}))
"""


def ready(out: Path, question: str, env: dict[str, str]) -> str:
    """The index loaded to answer in a fresh process (imports included), its peak RSS, and
    the first `read` answer's latency (the reader loaded on the way)."""
    done = subprocess.run(
        [sys.executable, "-c", READY, str(out), question],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip().splitlines()[-1]


def against_fresh(folder: Path, out: Path, fresh: Path, env: dict[str, str]) -> tuple[float, str]:
    """An index written fresh from `folder` at `fresh` (its seconds), and COMPARE's line of the
    index at `out` against it."""
    shutil.rmtree(fresh, ignore_errors=True)
    began = time.perf_counter()
    command = [sys.executable, "-m", "ragteam", "index", "build", str(folder)]
    command += ["--out", str(fresh), "--retriever", "bm25"]
    subprocess.run(command, env=env, check=True, capture_output=True)
    built = round(time.perf_counter() - began, 1)
    compared = subprocess.run(
        [sys.executable, "-c", COMPARE, str(out), str(fresh)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return built, compared.stdout.strip().splitlines()[-1]


def sync(folder: Path, out: Path, env: dict[str, str], *extra: str) -> list[float]:
    """[seconds, peak MB, embedded, segments the index then has (0: written whole)]."""
    timed = timed_sync(folder, out, "bm25", env, list(extra))
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    return [*timed, len(manifest.get("segments", []))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--files", type=int, default=28400)
    parser.add_argument("--paragraphs", type=int, default=30)
    parser.add_argument("--work", type=Path, default=Path("/tmp/seg"))
    parser.add_argument("--reuse", action="store_true", help="keep the folder and its index")
    parser.add_argument("--many", type=int, default=1000, help="files changed at once, last")
    parser.add_argument(
        "--edits", type=int, default=0, help="one-file syncs more (past 8 segments: folds)"
    )
    args = parser.parse_args()
    folder, out, fresh = args.work / "docs", args.work / "ix", args.work / "fresh"
    env = {**os.environ, "XDG_CACHE_HOME": str(args.work / "cache")}
    if not (args.reuse and (out / "manifest.json").is_file()):
        shutil.rmtree(args.work, ignore_errors=True)
        make_folder(args.corpus, folder, args.files, args.paragraphs)
        print(json.dumps({"first_sync": sync(folder, out, env)}), flush=True)
    files = sorted(folder.rglob("*.txt"))
    files[0].write_text(files[0].read_text("utf-8") + "\nOne more line.\n", "utf-8")
    print(json.dumps({"one_changed": sync(folder, out, env)}), flush=True)
    files[1].unlink()
    print(json.dumps({"one_deleted": sync(folder, out, env)}), flush=True)
    for n, path in enumerate(files[-args.edits :] if args.edits else [], 1):
        path.write_text(path.read_text("utf-8") + f"\nEdit {n}.\n", "utf-8")
        print(json.dumps({f"edit_{n}": sync(folder, out, env)}), flush=True)
    print(ready(out, "What does one more line say?", env), flush=True)
    built, compared = against_fresh(folder, out, fresh, env)
    print(json.dumps({"fresh_build_s": built}), flush=True)
    print(compared, flush=True)
    for path in files[2 : 2 + args.many]:
        path.write_text(path.read_text("utf-8") + "\nA line added to many.\n", "utf-8")
    print(json.dumps({f"{args.many}_changed": sync(folder, out, env)}), flush=True)
    print(json.dumps({"merge": sync(folder, out, env, "--merge")}), flush=True)


if __name__ == "__main__":
    main()
