"""Many people at once: `ragteam serve` answering `read` questions from 1, 8 and 32 clients that
each ask in a loop (issue 70). Starts the server on 127.0.0.1 in its own process, waits for
/healthz, then for each client count runs SECONDS of load and reports the answers per second,
latency percentiles of the answered, and every other outcome by its HTTP status (503 with
Retry-After when the queue is full, which each client then waits out as a polite client does;
never a hang: each request has a client timeout).

    python bench/serve_load.py --index DIR --questions Q.jsonl --clients 1,8,32 --seconds 60

    python bench/serve_load.py --index DIR --flood 500

--flood N: one client opens N connections at once, each asking a question, while another asks
/healthz in a loop: every request's outcome by status (none may hang or fail with a 5xx), how
long the flood took, and /healthz's latency during it.

--index: an index directory (`ragteam index build` or `sync`); --questions: JSONL rows with a
"question" (default: the demo questions shipped in the package); --concurrency, --queue and
--workers are the server's own options. The results go to --out as JSON too."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
from server_load import free_port, healthy  # the other load bench's server start

TIMEOUT = 300.0  # seconds a client waits for one answer before counting it as timed out


def start_server(
    index: Path, port: int, concurrency: int, queue: int, workers: int = 1
) -> subprocess.Popen:
    command = [
        sys.executable, "-m", "ragteam", "serve", "--index", f"bench={index}",
        "--port", str(port), "--queue", str(queue), "--workers", str(workers), "--no-watch",
    ]  # fmt: skip
    command += ["--concurrency", str(concurrency)] if concurrency else []  # else the default
    return healthy(command, port)


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) used so far by process `pid` and every live descendant (the
    workers), from /proc; 0 for a process already gone."""
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        n = int(stat.parent.name)
        parents[n] = int(fields[1])
        used[n] = (int(fields[11]) + int(fields[12])) / tick
    total = 0.0
    for n, seconds in used.items():
        m = n
        while m not in (0, 1) and m != pid:
            m = parents.get(m, 0)
        total += seconds if m == pid else 0.0
    return total


def load(port: int, questions: list[str], clients: int, seconds: float, server: int) -> dict:
    """`clients` threads asking in a loop for `seconds`; each answer's latency and status,
    and the cores the server (`server`, a pid, with its workers) and these clients used."""
    done: list[tuple[int, float]] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(n: int) -> None:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=TIMEOUT) as http:
            k = n
            while time.monotonic() < stop:
                body = {"question": questions[k % len(questions)], "index": "bench"}
                started = time.perf_counter()
                wait = 0.0
                try:
                    reply = http.post("/v1/answer", json=body)
                    status = reply.status_code
                    if status in (429, 503):  # a polite client waits as it is told
                        wait = float(reply.headers.get("retry-after", 1))
                except httpx.TimeoutException:
                    status = 0  # no answer within TIMEOUT
                with lock:
                    done.append((status, time.perf_counter() - started))
                k += clients
                time.sleep(max(0.0, min(wait, stop - time.monotonic())))

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    server_before, ours_before = cpu_seconds(server), time.process_time()
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    server_cores = (cpu_seconds(server) - server_before) / wall
    client_cores = (time.process_time() - ours_before) / wall
    ok = sorted(s for status, s in done if status == 200)

    def pct(p: float) -> float | None:
        return round(ok[min(len(ok) - 1, int(p * len(ok)))], 3) if ok else None

    return {
        "clients": clients,
        "seconds": round(wall, 1),
        "answered": len(ok),
        "per_second": round(len(ok) / wall, 2),
        "p50": pct(0.50),
        "p95": pct(0.95),
        "p99": pct(0.99),
        "mean": round(statistics.fmean(ok), 3) if ok else None,
        "other": dict(Counter(str(status) for status, _ in done if status != 200)),
        "server_cores": round(server_cores, 2),
        "client_cores": round(client_cores, 2),
        "server_cpu_s_an_answer": round(server_cores * wall / len(ok), 3) if ok else None,
    }


def flood(port: int, question: str, connections: int) -> dict:
    """`connections` requests at once from one client, /healthz probed meanwhile."""
    import asyncio

    async def run() -> dict:
        limits = httpx.Limits(max_connections=connections + 1)
        url = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=url, timeout=TIMEOUT, limits=limits) as http:

            async def one() -> str:
                try:
                    body = {"question": question, "index": "bench"}
                    return str((await http.post("/v1/answer", json=body)).status_code)
                except httpx.TimeoutException:
                    return "timed out"
                except httpx.TransportError as exc:
                    return type(exc).__name__

            probes: list[float] = []

            async def probe(until: asyncio.Task) -> None:
                # a client of its own: another person's first request, not one in the pool
                async with httpx.AsyncClient(base_url=url, timeout=TIMEOUT) as other:
                    while not until.done():
                        began = time.perf_counter()
                        await other.get("/healthz")
                        probes.append(time.perf_counter() - began)
                        await asyncio.sleep(0.05)

            began = time.perf_counter()
            everyone = asyncio.ensure_future(asyncio.gather(*(one() for _ in range(connections))))
            await probe(everyone)
            outcomes = Counter(await everyone)
            probes.sort()
            return {
                "connections": connections,
                "seconds": round(time.perf_counter() - began, 1),
                "outcomes": dict(outcomes),
                "healthz_p50_ms": round(1000 * probes[len(probes) // 2], 1) if probes else None,
                "healthz_max_ms": round(1000 * probes[-1], 1) if probes else None,
            }

    return asyncio.run(run())


def warm(port: int, question: str, workers: int, seconds: float = 60.0) -> None:
    """One answer from each worker (fresh connections until each has answered one): the first
    answer loads the reader in its process, and is not part of any level."""
    warmed: set[int] = set()
    deadline = time.monotonic() + seconds
    while len(warmed) < workers and time.monotonic() < deadline:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=TIMEOUT) as client:
            worker = client.get("/healthz").json().get("worker")  # a keep-alive connection
            if worker not in warmed:
                client.post("/v1/answer", json={"question": question, "index": "bench"})
                warmed.add(worker)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--questions", type=Path)
    parser.add_argument("--clients", default="1,8,32")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--concurrency", type=int, default=0, help="0: the server's default")
    parser.add_argument("--queue", type=int, default=8)
    parser.add_argument("--workers", type=int, default=1, help="the server's processes")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--flood", type=int, default=0, help="connections opened at once")
    args = parser.parse_args()
    if args.questions is None:
        from importlib.resources import files

        args.questions = Path(str(files("ragteam.data").joinpath("demo_questions.jsonl")))
    rows = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    questions = [r["question"] for r in rows]
    port = free_port()
    server = start_server(args.index, port, args.concurrency, args.queue, args.workers)
    results = []
    try:
        warm(port, questions[0], args.workers)
        if args.flood:
            results.append(flood(port, questions[0], args.flood))
            print(json.dumps(results[-1]), flush=True)
        for clients in (int(c) for c in args.clients.split(",")) if not args.flood else ():
            results.append(load(port, questions, clients, args.seconds, server.pid))
            print(json.dumps(results[-1]), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    if args.out:
        args.out.write_text(json.dumps({"cpus": os.cpu_count(), "levels": results}, indent=1))


if __name__ == "__main__":
    main()
