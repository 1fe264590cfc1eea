"""How soon a person sees the answer being written: time to the first answer text and to the
whole answer, per strategy, through `ragteam serve`'s two streams (the page's SSE and the
OpenAI chat stream), against the same answer asked without streaming; on the embedded model
in-process and (with --served) through llama.cpp's server on 127.0.0.1.

    python bench/streaming.py --strategies oner,ircot,smart --rounds 2 --out /tmp/streaming.json
    python bench/streaming.py --served --strategies oner,ircot --out /tmp/streaming-served.json

Questions: the bundled demo questions over the demo index (both ship in the package). Calls are
not cached and llama.cpp's KV snapshots are off, so every answer computes its prompt; each round
asks every question plainly and streamed, the order alternating between rounds, so that what
llama.cpp keeps of the previous prompt favours neither. Server-side time stamps come from the
server's own event function (`writing_event`, wrapped here only), taken in the worker thread as
the model's reply grows; the client is in the same process, so one clock measures both.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from ragteam.commands.demo import demo_index_dir, demo_questions
from ragteam.llm import ModelOptions, Request, load_model
from ragteam.server import ServerConfig, create_app, streaming


def _stamped(part: Any) -> dict[str, Any]:
    event = ORIGINAL(part)
    event["_made"] = time.perf_counter()
    return event


ORIGINAL = streaming.writing_event
streaming.writing_event = _stamped  # the server's own events, stamped where they are made


@contextmanager
def serving(app: Any) -> Any:
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _events(response: httpx.Response) -> Any:
    """(event name, data) of an SSE response as each arrives (OpenAI chunks are `message`)."""
    name, data = "message", ""
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data += line[6:]
        elif not line and data:
            yield name, (None if data == "[DONE]" else json.loads(data))
            name, data = "message", ""


def ask_plain(client: httpx.Client, strategy: str, question: str) -> dict[str, float]:
    started = time.perf_counter()
    body = {"question": question, "strategy": strategy, "index": "demo"}
    reply = client.post("/v1/answer", json=body, timeout=600)
    reply.raise_for_status()
    return {"answer": time.perf_counter() - started}


def ask_sse(client: httpx.Client, strategy: str, question: str) -> dict[str, float]:
    """The page's stream: first non-empty answer text, its delay from the server, the end."""
    started, found = time.perf_counter(), {}
    body = {"question": question, "strategy": strategy, "index": "demo"}
    with client.stream("POST", "/v1/answer/stream", json=body, timeout=600) as response:
        for name, data in _events(response):
            now = time.perf_counter()
            if name == "writing" and data.get("answer") and "first" not in found:
                found |= {"first": now - started, "delay": now - data["_made"]}
            elif name == "answer":
                found["answer"] = now - started
    return found


def ask_chat(client: httpx.Client, strategy: str, question: str) -> dict[str, float]:
    """The OpenAI chat stream: first `delta.content` that is answer text, then the end."""
    started, found = time.perf_counter(), {}
    body = {
        "model": f"{strategy}@demo",
        "messages": [{"role": "user", "content": question}],
        "stream": True,
    }
    with client.stream("POST", "/v1/chat/completions", json=body, timeout=600) as response:
        for _name, data in _events(response):
            now = time.perf_counter()
            if data is None:
                break
            choice = (data.get("choices") or [{}])[0]
            writing = (data.get("ragteam") or {}).get("writing")
            content = (choice.get("delta") or {}).get("content")
            if content and writing and "first" not in found:
                found |= {"first": now - started, "delay": now - writing["_made"]}
            if choice.get("finish_reason") == "stop":
                found["answer"] = now - started
    found.setdefault("first", found.get("answer", 0.0))  # nothing streamed: text at the end
    return found


def run(url: str, strategies: list[str], rounds: int) -> list[dict[str, Any]]:
    rows = []
    questions = [q["question"] for q in demo_questions()]
    modes = {"plain": ask_plain, "sse": ask_sse, "chat": ask_chat}
    with httpx.Client(base_url=url) as client:
        ask_plain(client, "oner", "warm up: who runs the ferry?")  # load the model
        for round_ in range(rounds):
            order = list(modes) if round_ % 2 == 0 else list(reversed(modes))
            for strategy in strategies:
                for mode in order:
                    for n, question in enumerate(questions):
                        found = modes[mode](client, strategy, question)
                        rows.append(
                            {
                                "round": round_,
                                "strategy": strategy,
                                "mode": mode,
                                "question": n,
                                **found,
                            }
                        )
                        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for strategy in dict.fromkeys(r["strategy"] for r in rows):
        mine = [r for r in rows if r["strategy"] == strategy]
        plain = statistics.mean(r["answer"] for r in mine if r["mode"] == "plain")
        line = {"plain_answer_s": plain}
        for mode in ("sse", "chat"):
            got = [r for r in mine if r["mode"] == mode]
            firsts = [r["first"] for r in got if "first" in r]
            delays = [r["delay"] for r in got if "delay" in r]
            line |= {
                f"{mode}_first_s": statistics.mean(firsts),
                f"{mode}_first_share": statistics.mean(firsts) / plain,
                f"{mode}_answer_s": statistics.mean(r["answer"] for r in got),
                f"{mode}_cost": statistics.mean(r["answer"] for r in got) / plain - 1,
                f"{mode}_delay_max_s": max(delays) if delays else float("nan"),
                f"{mode}_streamed": len(delays) / len(got),
            }
        out[strategy] = line
    return out


@contextmanager
def llama_server(gguf: str) -> Any:
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        gguf,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--model_alias",
        "smollm2",
    ]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{base}/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        proc.wait(30)


def tap_cost(rounds: int) -> dict[str, float]:
    """What watching a reply costs the model itself: the oner prompt of each demo question
    (its five passages), answered with and without `on_text`, the order alternating, paired."""
    from ragteam.agents.answerers import ANSWERER
    from ragteam.retrieval.index import load_index
    from ragteam.strategies.base import format_passages

    model = load_model("embedded", ModelOptions(cache=False, speedups=False))
    index = load_index(demo_index_dir())
    prompts = [
        ANSWERER.messages(
            passages=format_passages(index.retrieve(q["question"], 5)), question=q["question"]
        )
        for q in demo_questions()
    ]
    pairs: list[tuple[float, float]] = []
    for round_ in range(rounds):
        for n, messages in enumerate(prompts):
            timed = {}
            order = (True, False) if (round_ + n) % 2 == 0 else (False, True)
            for watched in order:
                sink = (lambda text, tokens: None) if watched else None
                started = time.perf_counter()
                model.complete(Request(messages, max_tokens=48), sink)
                timed[watched] = time.perf_counter() - started
            pairs.append((timed[False], timed[True]))
    plain = statistics.mean(p for p, _ in pairs)
    diffs = [w - p for p, w in pairs]
    return {
        "calls": len(pairs),
        "plain_s": plain,
        "watched_minus_plain_s": statistics.mean(diffs),
        "share": statistics.mean(diffs) / plain,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strategies", default="oner,ircot,smart")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--served", action="store_true", help="through llama.cpp's server")
    parser.add_argument("--tap-cost", action="store_true", help="the model-level cost only")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.tap_cost:
        result = tap_cost(args.rounds)
        args.out.write_text(json.dumps(result, indent=1))
        print(json.dumps(result, indent=1))
        return
    strategies = [s for s in args.strategies.split(",") if s]
    if args.served:
        from ragteam.llm.llamacpp import embedded_model_path

        with llama_server(str(embedded_model_path())) as base:
            options = ModelOptions(cache=False, base_url=base, context_length=2048)
            model = load_model("openai:smollm2", options)
            rows = _measure(model, strategies, args.rounds)
    else:
        model = load_model("embedded", ModelOptions(cache=False, speedups=False))
        rows = _measure(model, strategies, args.rounds)
    result = {"rows": rows, "summary": summary(rows)}
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result["summary"], indent=1))


def _measure(model: Any, strategies: list[str], rounds: int) -> list[dict[str, Any]]:
    config = ServerConfig(indexes={"demo": demo_index_dir()})
    with serving(create_app(config, model)) as url:
        return run(url, strategies, rounds)


if __name__ == "__main__":
    main()
