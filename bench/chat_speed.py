"""The OpenAI-compatible chat route and the MCP server against the direct paths, on 127.0.0.1.

    python bench/chat_speed.py --index bench/out/indexes/demo-hybrid

1. Streamed chat through the official `openai` client on the embedded model: time to the first
   chunk and to the last, against the same question through `/v1/answer/stream` (first and last
   SSE event). The LLM cache is off, and each path asks its own copy of the question.
2. Concurrent chat clients on the scripted (fake) model: requests/s, p50/p95 latency, 5xx count.
3. The MCP path (`ask` over streamable HTTP, official `mcp` client) against `ragteam.answer`
   in-process, on the fake model: the overhead per call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

QUESTION = "In which village was the engineer who built the Wrenhold Lighthouse born?"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(app) -> tuple[object, int]:
    import uvicorn

    port = _port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server, port


def streamed(index: Path, runs: int) -> dict[str, float]:
    from openai import OpenAI

    from ragteam.llm import ModelOptions
    from ragteam.server import ServerConfig, create_app

    config = ServerConfig(indexes={"demo": index}, model_options=ModelOptions(cache=False))
    server, port = _start(create_app(config))
    client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0)
    chat_first, chat_last, sse_first, sse_last = [], [], [], []
    for n in range(runs + 1):  # the first round loads the model: not counted
        started = time.perf_counter()
        first = None
        for _chunk in client.chat.completions.create(
            model="oner", stream=True, messages=[{"role": "user", "content": f"{QUESTION} ({n})"}]
        ):
            first = first or time.perf_counter() - started
        last = time.perf_counter() - started
        if n:
            chat_first.append(first)
            chat_last.append(last)
        started = time.perf_counter()
        first = None
        body = {"question": f"{QUESTION} [{n}]", "index": "demo", "strategy": "oner"}
        with httpx.stream(
            "POST", f"http://127.0.0.1:{port}/v1/answer/stream", json=body, timeout=300
        ) as response:
            for line in response.iter_lines():
                if line.startswith("event:"):
                    first = first or time.perf_counter() - started
        if n:
            sse_first.append(first)
            sse_last.append(time.perf_counter() - started)
    server.should_exit = True
    med = statistics.median
    return {
        "chat_first_s": round(med(chat_first), 3),
        "chat_last_s": round(med(chat_last), 3),
        "stream_first_s": round(med(sse_first), 3),
        "stream_last_s": round(med(sse_last), 3),
    }


def concurrent(index: Path, clients: int, requests: int) -> dict[str, float]:
    from ragteam.llm import FakeModel
    from ragteam.server import ServerConfig, create_app

    def reply(messages, params):
        time.sleep(0.05)
        return "Hevik"

    config = ServerConfig(indexes={"demo": index}, queue_size=256)
    server, port = _start(create_app(config, FakeModel(reply)))
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    lock = threading.Lock()

    def work(c: int) -> None:
        with httpx.Client(timeout=120) as http:
            for r in range(requests):
                body = {
                    "model": "oner",
                    "messages": [{"role": "user", "content": f"{QUESTION} {c}.{r}"}],
                }
                started = time.perf_counter()
                status = http.post(
                    f"http://127.0.0.1:{port}/v1/chat/completions", json=body
                ).status_code
                with lock:
                    latencies.append(time.perf_counter() - started)
                    statuses[status] += 1

    began = time.perf_counter()
    threads = [threading.Thread(target=work, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - began
    server.should_exit = True
    ordered = sorted(latencies)
    return {
        "requests": len(latencies),
        "requests_per_s": round(len(latencies) / wall, 1),
        "p50_s": round(ordered[len(ordered) // 2], 3),
        "p95_s": round(ordered[int(len(ordered) * 0.95) - 1], 3),
        "status_5xx": sum(v for k, v in statuses.items() if k >= 500),
        "statuses": dict(statuses),
    }


def mcp_overhead(index: Path, calls: int) -> dict[str, float]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    import ragteam
    from ragteam.llm import FakeModel
    from ragteam.server import ServerConfig
    from ragteam.server.mcp_app import build_mcp
    from ragteam.server.service import Service

    model = FakeModel(lambda m, p: "Hevik")
    service = Service(ServerConfig(indexes={"demo": index}), model)
    server, port = _start(build_mcp(service).streamable_http_app())

    async def over_mcp() -> list[float]:
        url = f"http://127.0.0.1:{port}/mcp"
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            times = []
            for n in range(calls):
                started = time.perf_counter()
                await s.call_tool("ask", {"question": f"{QUESTION} {n}", "strategy": "oner"})
                times.append(time.perf_counter() - started)
            return times

    mcp_times = asyncio.run(over_mcp())
    direct = []
    for n in range(calls):
        started = time.perf_counter()
        ragteam.answer(f"{QUESTION} {n}", index=index, strategy="oner", model=model)
        direct.append(time.perf_counter() - started)
    server.should_exit = True
    med = statistics.median
    return {
        "mcp_median_s": round(med(mcp_times), 4),
        "direct_median_s": round(med(direct), 4),
        "overhead_ms": round((med(mcp_times) - med(direct)) * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=10)
    args = parser.parse_args()
    print(json.dumps({"streamed_embedded": streamed(args.index, args.runs)}))
    print(json.dumps({"concurrent_fake": concurrent(args.index, args.clients, args.requests)}))
    print(json.dumps({"mcp_fake": mcp_overhead(args.index, 20)}))


if __name__ == "__main__":
    main()
