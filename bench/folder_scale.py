"""A user's folder at size, end to end (issue 70): sync time and peak RSS, a no-change re-sync,
one changed file, and search latency, for folders of N text files made from a corpus's
paragraphs.

    python bench/folder_scale.py --corpus ../shared/data/train/train_corpus.jsonl \\
        --files 10000,30000 --retriever bm25 --work /tmp/fscale

Each file is `# TITLE` and two paragraphs of the corpus (file i: paragraphs i and 7i+3 modulo
the corpus, so texts differ across the folder), or `--paragraphs P` of them (the rest
31i+11j+5), in folders of 1,000 files. Every sync runs as
its own process (`python -m ragteam.cli index sync`), its peak RSS read by `wait4` (it and its
conversion child), with a fresh cache folder per size (XDG_CACHE_HOME), so the first sync
converts everything. Search: 200 queries (8 words of a random file) on the loaded index, one
at a time.

    python bench/folder_scale.py --corpus ../shared/data/train/train_corpus.jsonl \
        --files 100000 --hostile --work /tmp/fscale

`--hostile`: the issue's bad input instead: N empty files (in folders of 1,000) and one real
file, then N entries in one directory (empty files) and one real file; each synced, then
synced again (nothing changed)."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def make_folder(corpus: Path, folder: Path, files: int, paragraphs: int = 2) -> None:
    rows = [json.loads(line) for line in corpus.open(encoding="utf-8")]
    n = len(rows)
    shutil.rmtree(folder, ignore_errors=True)
    for i in range(files):
        picked = [rows[i % n], rows[(7 * i + 3) % n]]
        picked += [rows[(31 * i + 11 * j + 5) % n] for j in range(2, paragraphs)]
        sub = folder / f"part{i // 1000:03d}"
        if i % 1000 == 0:
            sub.mkdir(parents=True)
        body = "\n\n".join(row["text"] for row in picked[:paragraphs])
        text = f"# {picked[0]['title']} ({i})\n\n{body}\n"
        (sub / f"{picked[0]['title'][:40].replace('/', '-')}-{i}.txt").write_text(text, "utf-8")


def timed_sync(
    folder: Path, out: Path, retriever: str, env: dict[str, str], extra: list[str] | None = None
) -> list[float]:
    """[seconds, peak RSS in MB, passages embedded] of one `index sync` process (and its
    reaped children); `extra`: more flags."""
    command = [sys.executable, "-m", "ragteam", "index", "sync", str(folder), "--out", str(out)]
    command += ["--retriever", retriever, *(extra or [])]
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as log:  # a file, not a pipe: wait4 must reap it
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        log.seek(0)
        told = log.read()
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"sync failed: {told[-2000:]}")
    embedded = re.search(r"(\d+) passages embedded", told)
    return [round(seconds, 1), round(usage.ru_maxrss / 1024), int(embedded[1]) if embedded else 0]


SEARCH = """
import json, random, resource, sys, time
began = time.perf_counter()
from ragteam.retrieval import load_index
index = load_index(sys.argv[1])
index.retrieve("warm the encoder", 10)
loaded, rss = time.perf_counter() - began, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rng = random.Random(7)
texts = [p.text.split() for p in rng.sample(index.passages, 200)]
times = []
for words in texts:
    start = rng.randrange(max(1, len(words) - 8))
    query = " ".join(words[start:start + 8])
    began = time.perf_counter()
    index.retrieve(query, 10)
    times.append((time.perf_counter() - began) * 1000)
times.sort()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"passages": len(index.passages), "p50": times[100], "p95": times[190],
                  "load_s": round(loaded, 1), "load_mb": rss // 1024, "search_mb": peak // 1024}))
"""


def one_size(args: argparse.Namespace, files: int) -> dict[str, object]:
    work = args.work / (f"{files}" if args.paragraphs == 2 else f"{files}x{args.paragraphs}")
    folder, out, cache = work / "docs", work / "ix", work / "cache"
    make_folder(args.corpus, folder, files, args.paragraphs)
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    first = timed_sync(folder, out, args.retriever, env)
    again = timed_sync(folder, out, args.retriever, env)
    changed = next(folder.glob("part000/*.txt"))
    changed.write_text(changed.read_text("utf-8") + "\nOne more line.\n", "utf-8")
    one = timed_sync(folder, out, args.retriever, env)
    found = subprocess.run(
        [sys.executable, "-c", SEARCH, str(out)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    search = json.loads(found.stdout.strip().splitlines()[-1])
    row = {"files": files, "retriever": args.retriever, "sync": first, "no_change": again}
    return {**row, "one_changed": one, **search}


def hostile(args: argparse.Namespace, files: int) -> None:
    """Sync and re-sync a folder of `files` empty files, then one directory of `files` entries."""
    rows = [json.loads(line) for line in args.corpus.open(encoding="utf-8")][:3]
    for shape in ("empty files in folders of 1,000", "entries in one directory"):
        work = args.work / f"hostile-{files}-{'flat' if 'one' in shape else 'empty'}"
        folder, out, cache = work / "docs", work / "ix", work / "cache"
        shutil.rmtree(work, ignore_errors=True)
        folder.mkdir(parents=True)
        for i in range(files):
            sub = folder if "one" in shape else folder / f"part{i // 1000:03d}"
            sub.mkdir(exist_ok=True)
            (sub / f"empty-{i}.txt").touch()
        (folder / "real.txt").write_text("\n\n".join(r["text"] for r in rows), "utf-8")
        env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
        first = timed_sync(folder, out, args.retriever, env)
        again = timed_sync(folder, out, args.retriever, env)
        print(
            f"| {files:,} {shape} | {first[0]} / {first[1]} | {again[0]} / {again[1]} |", flush=True
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="a JSONL of {title, text}")
    parser.add_argument("--files", default="10000", help="folder sizes, comma-separated")
    parser.add_argument("--retriever", default="bm25")
    parser.add_argument(
        "--paragraphs", type=int, default=2, help="paragraphs of the corpus a file (at least 2)"
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/fscale"))
    parser.add_argument("--hostile", action="store_true", help="empty files, one huge directory")
    args = parser.parse_args()
    if args.hostile:
        print("| folder | sync s / peak MB | re-sync s / MB |\n|---|---|---|")
        for files in (int(n) for n in args.files.split(",")):
            hostile(args, files)
        return
    print(
        "| files | passages | sync s / peak MB | no-change re-sync s / MB | one changed s / MB | "
        "embedded (sync, re-sync, one changed) | search p50 / p95 ms | load s / MB, after search |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for files in (int(n) for n in args.files.split(",")):
        r = one_size(args, files)
        print(
            f"| {r['files']:,} | {r['passages']:,} | {r['sync'][0]} / {r['sync'][1]} | "
            f"{r['no_change'][0]} / {r['no_change'][1]} | {r['one_changed'][0]} / "
            f"{r['one_changed'][1]} | {r['sync'][2]:,}, {r['no_change'][2]:,}, "
            f"{r['one_changed'][2]:,} | {r['p50']:.1f} / {r['p95']:.1f} | "
            f"{r['load_s']} / {r['load_mb']}, {r['search_mb']} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
