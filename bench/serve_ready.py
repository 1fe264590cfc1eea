"""A big index served (issue 89): how soon `ragteam serve` answers over it and what it holds.

    python bench/serve_ready.py make --n 1000000 --out /tmp/big/corpus.jsonl
    ragteam index build /tmp/big/corpus.jsonl --out /tmp/big/ix --retriever bm25 --passage-words 0
    python bench/serve_ready.py run --index /tmp/big/ix --out bench/out/serve-ready-1m.json

`make` writes N synthetic rows (60 words from a Zipf vocabulary of 50,000, 20 rows a document,
as bench/passages_scale.py makes them). `run` starts `ragteam serve` on the index in a fresh
process, and reports: seconds until /healthz answers, and until it says the server is warm
(the index and the reader loaded in the background); then the first `read` answer's seconds;
the next answers' p50; the
server's RSS (and its own anonymous memory: mapped index files are the page cache's) after
them. Questions are 8 words of random passages."""

from __future__ import annotations

import argparse
import itertools
import json
import random
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path


def make(out: Path, n: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(50_000)]
    cumulative = list(itertools.accumulate(1 / (i + 1) for i in range(len(vocab))))
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for i in range(n):
            text = " ".join(rng.choices(vocab, cum_weights=cumulative, k=60))
            row = {"id": f"doc-{i // 20}-{i % 20}", "title": f"doc {i // 20}", "text": text}
            handle.write(json.dumps(row) + "\n")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _memory_mb(pid: int) -> dict[str, float]:
    with open(f"/proc/{pid}/status") as status:
        fields = dict(line.split(":", 1) for line in status if ":" in line)
    return {k: int(fields[k].split()[0]) / 1024 for k in ("VmRSS", "RssAnon", "RssFile")}


def _questions(index: Path, count: int) -> list[str]:
    lines = (index / "passages.jsonl").open(encoding="utf-8")
    rng = random.Random(1)
    kept: list[str] = []
    for n, line in enumerate(lines):  # reservoir: one pass, bounded memory
        if len(kept) < count:
            kept.append(line)
        elif (at := rng.randrange(n + 1)) < count:
            kept[at] = line
    asked = []
    for line in kept:
        words = json.loads(line)["text"].split()
        start = rng.randrange(max(1, len(words) - 8))
        asked.append(" ".join(words[start : start + 8]) + "?")
    return asked


def run(index: Path, count: int) -> dict[str, object]:
    import httpx

    port = _free_port()
    command = [sys.executable, "-m", "ragteam", "serve", "--index", f"big={index}"]
    began = time.perf_counter()
    server = subprocess.Popen([*command, "--port", str(port)], stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        up = time.perf_counter() - began
        while httpx.get(url + "/healthz", timeout=10).json()["warm"]["state"] == "loading":
            time.sleep(0.1)
        ready = time.perf_counter() - began
        idle = _memory_mb(server.pid)
        times = []
        for question in _questions(index, count + 1):
            started = time.perf_counter()
            said = httpx.post(
                url + "/v1/answer", json={"question": question, "index": "big"}, timeout=600
            )
            said.raise_for_status()
            times.append(time.perf_counter() - started)
        return {
            "index": str(index),
            "passages": json.loads((index / "manifest.json").read_text())["passage_count"],
            "healthz_s": round(up, 2),
            "ready_s": round(ready, 2),  # /healthz: warm (the index and the reader loaded)
            "memory_mb_when_ready": idle,
            "first_answer_s": round(times[0], 2),
            "next_answers_p50_s": round(statistics.median(times[1:]), 3),
            "memory_mb_after": _memory_mb(server.pid),
        }
    finally:
        server.terminate()
        server.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    made = sub.add_parser("make")
    made.add_argument("--n", type=int, default=1_000_000)
    made.add_argument("--out", type=Path, required=True)
    ran = sub.add_parser("run")
    ran.add_argument("--index", type=Path, required=True)
    ran.add_argument("--answers", type=int, default=10)
    ran.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.command == "make":
        make(args.out, args.n)
        return
    result = run(args.index, args.answers)
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
