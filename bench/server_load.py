"""Load test of `ragteam serve` on 127.0.0.1: N clients x M requests, bounded, then stops.

    python bench/server_load.py --model fake --index bench/out/indexes/demo-hybrid
    python bench/server_load.py --model embedded --index bench/out/indexes/demo-hybrid \
        --clients 4 --requests 5

Starts the server in its own process (the fake model: a scripted reply after `--fake-delay`
seconds; embedded: `ragteam serve`), sends POST /v1/answer from N client threads, and prints
throughput, latency p50/p95, status counts and the server's memory (RSS) before and after.
Questions cycle through the demo questions, each request with its own suffix so that the LLM
cache never answers for the model.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

DEMO = Path(__file__).resolve().parents[1] / "ragteam" / "data" / "demo_questions.jsonl"


def serve_fake(port: int, index: str, delay: float) -> None:
    import uvicorn

    from ragteam.llm import FakeModel
    from ragteam.server import ServerConfig, create_app

    def reply(messages, params):
        time.sleep(delay)
        return "Hevik"

    config = ServerConfig(indexes={"demo": Path(index)}, queue_size=64)
    uvicorn.run(
        create_app(config, FakeModel(reply)), host="127.0.0.1", port=port, log_level="error"
    )


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args: argparse.Namespace, port: int) -> subprocess.Popen:
    if args.model == "fake":
        command = [
            sys.executable,
            __file__,
            "--serve-fake",
            str(port),
            "--index",
            args.index,
            "--fake-delay",
            str(args.fake_delay),
        ]
    else:
        command = [
            "ragteam",
            "serve",
            "--index",
            f"demo={args.index}",
            "--port",
            str(port),
            "--queue",
            "64",
            "--model",
            args.model,
        ]
    return healthy(command, port)


def healthy(command: list[str], port: int, seconds: float = 180.0) -> subprocess.Popen:
    """The server `command` starts, once its /healthz on `port` answers 200; SystemExit with
    the end of its stderr when it stops or does not answer within `seconds`."""
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and server.poll() is None:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("the server did not start: " + server.stderr.read().decode()[-2000:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="fake")
    parser.add_argument("--index", required=True)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=25, help="per client")
    parser.add_argument("--strategy", default="oner")
    parser.add_argument("--fake-delay", type=float, default=0.05)
    parser.add_argument("--serve-fake", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_fake:
        serve_fake(args.serve_fake, args.index, args.fake_delay)
        return
    questions = [json.loads(line)["question"] for line in DEMO.read_text().splitlines() if line]
    port = free_port()
    server = start(args, port)
    url = f"http://127.0.0.1:{port}/v1/answer"
    try:
        httpx.post(url, json={"question": questions[0], "index": "demo"}, timeout=600)  # warm-up
        before = rss_mib(server.pid)
        latencies: list[float] = []
        statuses: Counter[int] = Counter()
        lock = threading.Lock()

        def client(number: int) -> None:
            with httpx.Client(timeout=600) as http:
                for i in range(args.requests):
                    q = f"{questions[(number + i) % len(questions)]} ({number}-{i})"
                    started = time.perf_counter()
                    response = http.post(
                        url, json={"question": q, "index": "demo", "strategy": args.strategy}
                    )
                    with lock:
                        latencies.append(time.perf_counter() - started)
                        statuses[response.status_code] += 1

        started = time.perf_counter()
        threads = [threading.Thread(target=client, args=(n,)) for n in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - started
        after = rss_mib(server.pid)
    finally:
        server.terminate()
        server.wait(30)
    q = statistics.quantiles(latencies, n=20)
    print(
        json.dumps(
            {
                "model": args.model,
                "strategy": args.strategy,
                "clients": args.clients,
                "requests": len(latencies),
                "seconds": round(wall, 2),
                "throughput_rps": round(len(latencies) / wall, 2),
                "latency_p50_s": round(statistics.median(latencies), 3),
                "latency_p95_s": round(q[18], 3),
                "status": dict(statuses),
                "server_5xx": sum(v for k, v in statuses.items() if k >= 500),
                "rss_mib_before": round(before, 1),
                "rss_mib_after": round(after, 1),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
