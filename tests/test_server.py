"""The HTTP API on a scripted model and real indexes: every endpoint, the SSE event order,
auth, limits, errors as JSON, the bounded queue."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import threading
import time
from itertools import pairwise

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from ragteam.llm import FakeModel  # noqa: E402
from ragteam.server import ServerConfig, create_app  # noqa: E402
from ragteam.server.limits import Busy, Gate  # noqa: E402

QUESTION = "In which village was the engineer who built the Wrenhold Lighthouse born?"


def one_run_folder(tmp_path, name):
    """A folder of eval runs holding one run of one question."""
    runs = tmp_path / "runs"
    (runs / name).mkdir(parents=True)
    row = {
        "id": "q1",
        "strategy": "oner",
        "metrics": {"em": 1.0, "f1": 1.0, "match": 1.0},
        "cost": {"llm_calls": 1, "prompt_tokens": 5, "completion_tokens": 1, "parse_failures": 0},
        "wall_seconds": 0.5,
        "error": None,
        "trace": {
            "steps": [{"kind": "retrieve", "role": "retriever", "input": "q1", "output": []}]
        },
    }
    (runs / name / "results.jsonl").write_text(json.dumps(row) + "\n")
    (runs / name / "config.json").write_text("{}")
    return runs


def client(bm25_index_dir, model=None, **settings):
    config = ServerConfig(indexes={"demo": bm25_index_dir}, **settings)
    return TestClient(create_app(config, model or FakeModel(lambda m, p: "Hevik")))


def events(text):
    found = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        found.append((lines["event"], json.loads(lines["data"])))
    return found


def test_answer_returns_what_ask_json_trace_prints(bm25_index_dir):
    body = client(bm25_index_dir).post(
        "/v1/answer", json={"question": QUESTION, "index": "demo", "strategy": "oner"}
    )
    assert body.status_code == 200
    data = body.json()
    assert data["answer"] == "Hevik" and data["strategy"] == "oner"
    assert [s["kind"] for s in data["trace"]["steps"]] == ["retrieve", "llm", "support"]
    assert data["citations"] and data["cost"]["llm_calls"] == 1


def test_a_page_follow_up_is_searched_with_the_earlier_question(bm25_index_dir):
    web = client(bm25_index_dir)
    earlier = [{"question": "Who built the Wrenhold Lighthouse?", "answer": "Emrik Tollan [1]"}]
    ask = {"index": "demo", "strategy": "oner", "earlier": earlier}
    data = web.post("/v1/answer", json={**ask, "question": "And where was he born?"}).json()
    # the words people's rewrites carry (ragteam.followup): the subject, here with its answer
    standalone = "And where was he born? (following: built Wrenhold Lighthouse Emrik Tollan)"
    assert data["question"] == standalone
    searched = [s for s in data["trace"]["steps"] if s["kind"] == "retrieve"]
    assert "Wrenhold Lighthouse" in searched[0]["input"]["query"]
    (said,) = [s for s in data["trace"]["steps"] if s["meta"].get("event") == "follow_up"]
    assert standalone in said["output"]
    alone = web.post("/v1/answer", json={**ask, "question": "Who wrote the Hevik saga?"}).json()
    assert alone["question"] == "Who wrote the Hevik saga?"
    assert not any(s["meta"].get("event") == "follow_up" for s in alone["trace"]["steps"])
    too_many = {**ask, "question": "And then?", "earlier": earlier * 51}
    assert web.post("/v1/answer", json=too_many).status_code == 422


def test_the_stream_sends_each_step_then_the_answer(bm25_index_dir):
    with client(bm25_index_dir).stream(
        "POST",
        "/v1/answer/stream",
        json={"question": QUESTION, "index": "demo", "strategy": "oner"},
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        found = events(response.read().decode())
    assert found[0] == ("started", {})  # a free slot: it runs at once
    steps = [(e, d) for e, d in found if e not in ("writing", "started")]
    assert [e for e, _ in steps] == ["step", "step", "step", "answer"]
    assert [d["number"] for _, d in steps[:2]] == [1, 2]
    assert steps[0][1]["kind"] == "retrieve" and steps[1][1]["role"] == "answerer"
    # each step said in words, made once on the server (the page and MCP show them)
    assert [steps[0][1]["words"], steps[1][1]["words"]] == [
        "searched the documents",
        "wrote the answer",
    ]
    assert steps[3][1]["answer"] == "Hevik" and "trace" not in steps[3][1]


def test_the_stream_sends_the_answer_as_it_is_written(bm25_index_dir):
    reply = "Answer: Hevik, the harbour master.\n\nQuestion: who"
    with client(bm25_index_dir, FakeModel(lambda m, p: reply)).stream(
        "POST",
        "/v1/answer/stream",
        json={"question": QUESTION, "index": "demo", "strategy": "oner"},
    ) as response:
        found = events(response.read().decode())
    kinds = [e if e != "step" else d["kind"] for e, d in found]
    # written while the answerer writes, before its step is recorded, then checked
    assert kinds.index("writing") < kinds.index("llm") < kinds.index("answer")
    grown = [d["answer"] for e, d in found if e == "writing" and d["answer"]]
    assert grown[0] == "Hevik," and grown[-1] == "Hevik, the harbour master"
    assert all(later.startswith(earlier) for earlier, later in pairwise(grown))
    assert {d["role"] for e, d in found if e == "writing"} == {"answerer"}
    assert found[-1][1]["answer"] == grown[-1]  # what was shown is what was answered


def test_a_failing_answer_streams_an_error_event(bm25_index_dir):
    from ragteam.errors import ModelError

    def down(messages, params):
        raise ModelError("the model server is down")

    with client(bm25_index_dir, FakeModel(down)).stream(
        "POST",
        "/v1/answer/stream",
        json={"question": QUESTION, "index": "demo", "strategy": "oner"},
    ) as response:
        found = events(response.read().decode())
    assert found[-1] == (
        "error",
        {"error": "model error", "code": "model_error", "detail": "the model server is down"},
    )


def test_read_endpoints(bm25_index_dir, tmp_path):
    runs = one_run_folder(tmp_path, "r1")
    (runs / "not-a-run").mkdir()
    api = client(bm25_index_dir, runs_dir=runs)
    assert api.get("/healthz").json()["status"] == "ok"
    names = {s["name"]: s for s in api.get("/v1/strategies").json()}
    assert {"oner", "smart", "smurfs", "marag"} <= set(names)
    assert "planner" in names["smurfs"]["roles"] and names["oner"]["options"]["k"]["default"]
    assert api.get("/v1/indexes").json() == [
        {"name": "demo", "retriever": "bm25", "passages": 48, "ok": True}
    ]
    manifest = api.get("/v1/indexes/demo").json()
    assert manifest["name"] == "demo" and "path" not in manifest["source"]
    passage = api.get("/v1/passages/demo/halvard-04").json()
    assert passage["title"] == "Wrenhold Lighthouse"
    assert api.get("/v1/runs").json() == ["r1"]
    report = api.get("/v1/runs/r1").json()
    assert report["strategies"][0]["n"] == 1 and "| oner |" in report["markdown"]
    plot = api.get("/v1/runs/r1/plot.png")
    assert plot.status_code == 200 and plot.content[:4] == b"\x89PNG"
    assert api.get("/").status_code == 200 and "ragteam" in api.get("/").text
    assert api.get("/static/app.js").status_code == 200


def test_a_passage_comes_with_its_neighbours_in_its_own_file(tmp_path):
    from docfiles import make_folder

    from ragteam.retrieval import sync_folder
    from ragteam.retrieval.index import IndexSettings

    folder = make_folder(tmp_path / "docs")
    sync_folder(folder, tmp_path / "ix", index=IndexSettings(retriever="bm25"))
    api = TestClient(create_app(ServerConfig(indexes={"docs": tmp_path / "ix"}), FakeModel(["x"])))
    staff = api.get("/v1/passages/docs/report.pdf%232?around=1").json()
    assert "Jonas Quell" in staff["text"]
    assert [p["locator"]["page"] for p in staff["before"]] == [2]
    assert [p["locator"]["page"] for p in staff["after"]] == [4]
    first = api.get("/v1/passages/docs/report.pdf%230?around=3").json()
    assert first["before"] == [] and [p["locator"]["page"] for p in first["after"]] == [2, 3, 4]
    assert "before" not in api.get("/v1/passages/docs/report.pdf%232").json()
    slide = api.get("/v1/passages/docs/deck.pptx%230?around=3").json()  # a slide: itself alone
    assert "Notes: Mention the budget freeze." in slide["text"]
    assert slide["before"] == [] and slide["after"] == []
    assert api.get("/v1/passages/docs/report.pdf%232?around=9").status_code == 422


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "words"),
    [
        ("post", "/v1/answer", {"question": "x", "index": "nope"}, 404, "unknown index 'nope'"),
        ("post", "/v1/answer", {"question": "x", "strategy": "magic"}, 404, "unknown strategy"),
        ("post", "/v1/answer", {"question": ""}, 422, "question"),
        ("post", "/v1/answer", {"question": "x", "strategey": "read"}, 422, "strategey: Extra"),
        ("post", "/v1/answer", {"question": "x", "options": {"k": -4}}, 400, "between"),
        ("post", "/v1/answer", {"question": "x" * 5000}, 400, "at most 4,000"),
        ("get", "/v1/passages/demo/nope-1", None, 404, "unknown passage"),
        ("get", "/v1/passages/../../etc/passwd", None, 404, ""),
        ("get", "/v1/indexes/..%2F..%2Fetc", None, 404, "Not Found"),
        ("get", "/v1/indexes/etc", None, 404, "unknown index 'etc'"),
        ("get", "/v1/runs/..", None, 404, "Not Found"),
        ("get", "/v1/runs/r9", None, 404, "unknown run 'r9'"),
        ("get", "/static/..%2Fapp.py", None, 404, ""),
        ("post", "/v1/feedback", {"feedback_id": "abc"}, 400, "exactly one"),
    ],
)
def test_bad_requests_get_json_errors(bm25_index_dir, method, path, body, status, words):
    api = client(bm25_index_dir)
    response = api.post(path, json=body) if method == "post" else api.get(path)
    assert response.status_code == status
    if response.headers["content-type"].startswith("application/json"):
        assert words in response.json().get("detail", "")
    assert "Traceback" not in response.text


def test_malformed_json_and_huge_bodies(bm25_index_dir):
    api = client(bm25_index_dir)
    as_json = {"content-type": "application/json"}
    bad = api.post("/v1/answer", content=b"{not json", headers=as_json)
    assert bad.status_code == 422 and bad.json()["error"] == "bad request"
    huge = api.post(
        "/v1/answer", content=b"x" * 70_000, headers={"content-type": "application/json"}
    )
    assert huge.status_code == 413 and "64 KiB" in huge.json()["detail"]


def test_an_api_key_is_enforced_when_set(bm25_index_dir):
    api = client(bm25_index_dir, api_key="s3cret")
    assert api.get("/v1/strategies").status_code == 401
    assert api.get("/v1/strategies", headers={"Authorization": "Bearer wrong"}).status_code == 401
    ok = api.get("/v1/strategies", headers={"Authorization": "Bearer s3cret"})
    assert ok.status_code == 200
    assert api.get("/healthz").status_code == 200  # liveness needs no key
    from ragteam.errors import InputError

    with pytest.raises(InputError, match="API key"):
        client(bm25_index_dir, host="0.0.0.0")
    client(bm25_index_dir, host="0.0.0.0", api_key="k")  # allowed with a key


def test_feedback_reaches_the_router_of_an_adaptive_answer(bm25_index_dir, tmp_path):
    from test_adaptive import _state

    from ragteam.router.features import QuestionFeatures
    from ragteam.router.state import load_state

    nothing = client(bm25_index_dir, router_state=tmp_path / "none.json")
    missing = nothing.post("/v1/feedback", json={"feedback_id": "x", "correct": True})
    assert missing.status_code == 409 and "no router state" in missing.json()["detail"]

    path = _state(tmp_path, QuestionFeatures(dims=0))
    api = client(bm25_index_dir, router_state=path)
    body = {
        "question": "Who built the Wrenhold Lighthouse?",
        "index": "demo",
        "strategy": "adaptive",
    }
    with api.stream("POST", "/v1/answer/stream", json=body) as response:
        found = events(response.read().decode())
    [fid] = [
        d["meta"]["feedback_id"] for e, d in found if e == "step" and "feedback_id" in d["meta"]
    ]
    sent = api.post("/v1/feedback", json={"feedback_id": fid, "correct": True})
    assert sent.status_code == 200 and sent.json()["feedback_id"] == fid
    assert load_state(path).updates == 1
    again = api.post("/v1/feedback", json={"feedback_id": fid, "correct": False})
    assert again.status_code == 400


def _held(bm25_index_dir, **limits):
    """A server whose model answers only once `release` is set: its one slot stays taken."""
    release = threading.Event()

    def slow(messages, params):
        release.wait(10)
        return "Hevik"

    return client(bm25_index_dir, FakeModel(slow), **limits), release


def _until_answering(api, deadline: float = 10.0) -> None:
    """Wait until an answer holds the slot (it runs in the service: `CoreShare.now`)."""
    service = api.app.state.service
    began = time.monotonic()
    while service.cores.now < 1 and time.monotonic() - began < deadline:
        time.sleep(0.02)
    assert service.cores.now == 1


def test_a_full_queue_answers_503_with_retry_after(bm25_index_dir):
    api, release = _held(bm25_index_dir, queue_size=0, queue_timeout=5)
    results = {}

    def first():
        results["first"] = api.post(
            "/v1/answer", json={"question": QUESTION, "index": "demo", "strategy": "oner"}
        )

    worker = threading.Thread(target=first)
    worker.start()
    _until_answering(api)
    busy = api.post("/v1/answer", json={"question": QUESTION, "index": "demo", "strategy": "oner"})
    chat_body = {"model": "oner", "messages": [{"role": "user", "content": QUESTION}]}
    chat_busy = api.post("/v1/chat/completions", json=chat_body)
    streamed_busy = api.post("/v1/chat/completions", json={**chat_body, "stream": True})
    release.set()
    worker.join(60)  # the first answer still loads what oner needs (seconds on 2 busy cores)
    # overloaded, not over a quota: 503 (a 429 would tell the client it asked too often)
    assert busy.status_code == 503 and busy.headers["retry-after"] == "5"
    assert busy.json()["code"] == "busy"
    for refused in (chat_busy, streamed_busy):  # the chat route too, in OpenAI's shape
        assert refused.status_code == 503 and refused.headers["retry-after"] == "5"
        assert refused.json()["error"]["code"] == "busy"
    assert results["first"].status_code == 200


def test_an_answer_that_waits_past_the_queue_timeout_gets_503(bm25_index_dir):
    api, release = _held(bm25_index_dir, queue_size=1, queue_timeout=0.5)
    body = {"question": QUESTION, "index": "demo", "strategy": "oner"}
    worker = threading.Thread(target=lambda: api.post("/v1/answer", json=body))
    worker.start()
    _until_answering(api)
    began = time.monotonic()
    waited = api.post("/v1/answer", json=body)  # queued (the queue has room), then let go
    took = time.monotonic() - began
    release.set()
    worker.join(10)
    assert waited.status_code == 503 and waited.headers["retry-after"] == "10"
    assert "within 0.5 s" in waited.json()["detail"] and 0.4 < took < 5


def test_redaction_goes_by_path_component_and_speaks_to_clients(tmp_path):
    from ragteam.server.redact import redact_paths

    config = ServerConfig(indexes={"hp": tmp_path / "ix"})
    said = redact_paths(f"cannot read {tmp_path}/ix-corrupt/bm25/data.npz", config)
    assert "hp" not in said and "<server path>" in said and "ix-corrupt" not in said
    inside = redact_paths(f"bad file {tmp_path}/ix/bm25/data.npz: rebuild", config)
    assert inside == "bad file index 'hp': rebuild"  # not the layout inside it
    down = redact_paths(
        "no server answers. Start the server (e.g. `python -m llama_cpp.server --model "
        "FILE.gguf`) or fix --base-url.",
        None,
    )
    assert "llama_cpp" not in down and "operator" in down


def test_the_gate_queues_times_out_and_hands_slots_on():
    async def scenario():
        gate = Gate(concurrency=1, queue_size=1, timeout=0.3)
        await gate.acquire()
        waiter = asyncio.ensure_future(gate.acquire())
        await asyncio.sleep(0.05)
        assert gate.waiting == 1
        with pytest.raises(Busy):
            await gate.acquire()  # queue full: refused at once
        threading.Thread(target=gate.release).start()  # released from another thread
        await asyncio.wait_for(waiter, 1)
        with pytest.raises(Busy, match="within"):
            await gate.acquire()  # waits 0.3 s, then gives up
        gate.release()
        await asyncio.wait_for(gate.acquire(), 1)

    asyncio.run(scenario())


def test_a_queued_client_that_goes_away_leaves_the_queue_at_once():
    """Its place is given up while it waits (not when a slot would have reached it), so the
    client behind it is served next and the queue has room again."""

    async def scenario():
        gate = Gate(concurrency=1, queue_size=2, timeout=5)
        await gate.acquire()
        left = False

        async def gone():
            return left

        leaver = asyncio.ensure_future(gate.acquire_unless(gone, every=0.02))
        stayer = asyncio.ensure_future(gate.acquire_unless(lambda: asyncio.sleep(0, False)))
        await asyncio.sleep(0.05)
        assert gate.waiting == 2
        left = True
        assert await asyncio.wait_for(leaver, 1) is False
        assert gate.waiting == 1  # gone before any slot was freed
        gate.release()
        assert await asyncio.wait_for(stayer, 1) is True
        gate.release()
        await asyncio.wait_for(gate.acquire(), 1)  # the slot the leaver never took is free

    asyncio.run(scenario())


def test_a_client_that_goes_away_stops_the_work(bm25_index_dir, tmp_path):
    from ragteam.retrieval import build_index

    calls = []

    def slow(messages, params):
        calls.append(1)
        time.sleep(0.3)
        return {"analysis": "a", "steps": ["a?", "b?", "c?", "d?"]}

    index = tmp_path / "ix"
    shutil.copytree(bm25_index_dir, index)
    api = client(index, FakeModel(slow))
    body = {"question": QUESTION, "index": "demo", "strategy": "marag"}
    with api.stream("POST", "/v1/answer/stream", json=body) as response:
        for line in response.iter_lines():
            if line.startswith("event: step"):
                break  # hang up after the first step
    time.sleep(1.5)
    settled = len(calls)
    time.sleep(1.0)
    assert len(calls) == settled and settled < 8  # stopped, far short of a whole marag answer
    assert build_index  # the copy is a real index


def test_the_only_index_is_the_default_and_errors_name_no_server_path(bm25_index_dir, tmp_path):
    api = client(bm25_index_dir)
    answered = api.post("/v1/answer", json={"question": QUESTION, "strategy": "oner"})
    assert answered.status_code == 200 and answered.json()["citations"]
    broken = tmp_path / "broken-index"
    broken.mkdir()
    config = ServerConfig(indexes={"a": bm25_index_dir, "b": broken})
    two = TestClient(create_app(config, FakeModel(lambda m, p: "x")))
    failed = two.post("/v1/answer", json={"question": QUESTION, "index": "b"})
    assert failed.status_code >= 400
    body = failed.json()
    assert body["code"] and str(tmp_path) not in body["detail"]
    assert "index 'b'" in body["detail"] or "<server path>" in body["detail"]


def test_strategies_say_what_they_are_and_whether_they_can_answer(tmp_path):
    """The page's strategy list: a description, whether an index is needed, and why a
    strategy cannot answer here (adaptive without a trained router)."""
    from fastapi.testclient import TestClient

    from ragteam.llm import FakeModel
    from ragteam.server import ServerConfig, create_app

    config = ServerConfig(indexes={}, router_state=tmp_path / "missing-router.json")
    with TestClient(create_app(config, FakeModel(lambda m, p: "x"))) as client:
        found = {s["name"]: s for s in client.get("/v1/strategies").json()}
    assert "trained router" in found["adaptive"]["unavailable"]
    assert found["oner"]["unavailable"] == "" and found["oner"]["needs_index"] is True
    assert found["nor"]["needs_index"] is False
    assert "own knowledge" in found["nor"]["description"]
    assert found["smart"]["description"]


def test_docs_are_served_without_a_cdn(bm25_index_dir):
    with client(bm25_index_dir) as c:
        page = c.get("/docs")
        assert page.status_code == 200
        assert "cdn" not in page.text and "/docs-assets/swagger-ui-bundle.js" in page.text
        script = c.get("/docs-assets/swagger-ui-bundle.js")
        assert script.status_code == 200 and len(script.content) > 100_000
        assert c.get("/docs-assets/../app.py").status_code == 404
        assert c.get("/docs-assets/index.html").status_code == 404


def test_sigterm_stops_a_server_with_an_answer_in_flight(bm25_index_dir):
    """SIGTERM while a slow answer streams: the process exits within the 10 s grace plus a
    step, not when the answer would have finished (ircot, 1 s a call, up to 8 calls)."""
    import signal
    import socket
    import subprocess
    import sys
    from pathlib import Path

    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    script = Path(__file__).with_name("serve_slow.py")
    proc = subprocess.Popen([sys.executable, str(script), str(bm25_index_dir), str(port)])
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        body = {"question": QUESTION, "index": "demo", "strategy": "ircot"}
        waiting: list[httpx.Response] = []
        with httpx.stream("POST", url + "/v1/answer/stream", json=body, timeout=30) as reply:
            for line in reply.iter_lines():
                if line.startswith("event: step"):
                    break
            second = threading.Thread(  # queued behind the running answer
                target=lambda: waiting.append(httpx.post(url + "/v1/answer", json=body, timeout=30))
            )
            second.start()
            time.sleep(1.0)
            proc.send_signal(signal.SIGTERM)
            started = time.time()
            second.join(timeout=10)
            refused_after = time.time() - started
            assert proc.wait(timeout=40) is not None
        assert time.time() - started < 15
        # N13: the waiting request is refused at once, in the API's JSON (was a plain-text 500)
        assert waiting and waiting[0].status_code == 503 and refused_after < 5
        assert waiting[0].json()["code"] == "shutting_down" and waiting[0].headers["Retry-After"]
    finally:
        proc.kill()


def test_closing_the_service_stops_an_answer_at_its_next_step(bm25_index_dir):
    """At shutdown a running answer stops at its next step instead of running to its end."""
    from ragteam.server.asking import Asked
    from ragteam.server.limits import Closing
    from ragteam.server.service import Service

    calls = []

    def slow(messages, params):
        calls.append(1)
        time.sleep(0.3)
        return "Let me look further. So the answer is: unknown"

    service = Service(ServerConfig(indexes={"demo": bm25_index_dir}), FakeModel(slow))
    first = threading.Event()
    running = service.pool.submit(
        service.answer,
        Asked(question=QUESTION, index="demo", strategy="ircot"),
        lambda step: first.set(),
    )
    assert first.wait(10)
    service.close()
    with pytest.raises(Closing):
        running.result(timeout=10)
    assert len(calls) <= 2


def test_errors_speak_to_an_api_client_not_to_a_shell():
    """A web user cannot pass `--index DIR` or run commands on the server: the message says
    what the request lacks."""
    from fastapi.testclient import TestClient

    config = ServerConfig(indexes={})
    with TestClient(create_app(config, FakeModel(lambda m, p: "x"))) as api:
        reply = api.post("/v1/answer", json={"question": QUESTION, "strategy": "oner"})
    assert reply.status_code == 400
    detail = reply.json()["detail"]
    assert '"index"' in detail and "--index" not in detail


def test_run_question_routes_refuse_unknown_names(bm25_index_dir, tmp_path):
    """The per-question routes reach runs, labels and rows by name only."""
    with client(bm25_index_dir, runs_dir=one_run_folder(tmp_path, "r1")) as c:
        assert c.get("/v1/runs/r1/questions").json()["questions"][0]["id"] == "q1"
        trace = c.get("/v1/runs/r1/trace", params={"label": "oner", "id": "q1"})
        assert trace.status_code == 200
        assert [step["words"] for step in trace.json()["steps"]] == ["searched the documents"]
        for params in ({"label": "nope", "id": "q1"}, {"label": "oner", "id": "../x"}):
            reply = c.get("/v1/runs/r1/trace", params=params)
            assert reply.status_code == 404 and reply.json()["detail"].startswith("unknown")
        assert c.get("/v1/runs/..%2Fr1/questions").status_code == 404
        assert c.get("/v1/runs/r1/trace").status_code == 422  # label and id are required


def test_a_run_is_read_once_and_again_when_it_grows(bm25_index_dir, tmp_path, monkeypatch):
    """The run routes share one read of results.jsonl until the file changes."""
    from ragteam.eval import report

    runs = one_run_folder(tmp_path, "r1")
    reads = []
    real = report.load_runs
    monkeypatch.setattr(report, "load_runs", lambda paths: reads.append(paths) or real(paths))
    with client(bm25_index_dir, runs_dir=runs) as c:
        assert c.get("/v1/runs/r1").status_code == 200
        assert len(c.get("/v1/runs/r1/questions").json()["questions"]) == 1
        assert c.get("/v1/runs/r1/trace", params={"label": "oner", "id": "q1"}).status_code == 200
        assert len(reads) == 1
        results = runs / "r1" / "results.jsonl"
        row = json.loads(results.read_text())
        with results.open("a") as f:
            f.write(json.dumps({**row, "id": "q2"}) + "\n")
        assert len(c.get("/v1/runs/r1/questions").json()["questions"]) == 2
        assert len(reads) == 2


def test_a_read_answer_never_loads_the_model_and_oner_loads_it_once(bm25_index_dir, monkeypatch):
    """The server handed every answer its model, loaded: the first `read` question paid for
    loading the LLM (seconds, and its memory) that `read` never asks anything. The first
    `oner` loads it, and its status says so (it said "searched the documents" meanwhile)."""
    import ragteam.server.service as service_module

    loads = []

    def load(name, options):  # noqa: ANN001
        loads.append(name)
        return FakeModel(lambda m, p: "Hevik")

    monkeypatch.setattr(service_module, "load_model", load)
    config = ServerConfig(indexes={"demo": bm25_index_dir})
    with TestClient(create_app(config)) as api:
        asked = {"question": QUESTION, "index": "demo", "strategy": "read"}
        assert api.post("/v1/answer", json=asked).status_code == 200
        assert loads == []
        with api.stream("POST", "/v1/answer/stream", json={**asked, "strategy": "oner"}) as r:
            found = events(r.read().decode())
        # the first use says it loads the model before it does, and how long it took
        said = [d["words"] for e, d in found if e == "step"]
        assert said[0] == "loading the model (its first use here)"
        assert re.fullmatch(r"loaded the model in \d+\.\d s", said[1]), said
        assert said[2] == "searched the documents"
        reply = api.post("/v1/answer", json={**asked, "strategy": "oner"})
        assert reply.status_code == 200 and reply.json()["answer"] == "Hevik"
        assert len(loads) == 1


def test_answers_run_at_once_while_a_one_at_a_time_model_takes_its_calls_in_turn(
    bm25_index_dir,
):
    """`serve --concurrency 2` was refused for the embedded model even for `read`, which asks
    it nothing; now answers run at once and the model's calls never overlap."""
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    inside, overlaps = [0], []
    guard = threading.Lock()

    def reply(messages, params):  # noqa: ANN001
        with guard:
            inside[0] += 1
            overlaps.append(inside[0] > 1)
        time.sleep(0.05)
        with guard:
            inside[0] -= 1
        return "Hevik"

    model = FakeModel(reply)
    model.parallel = False
    config = ServerConfig(indexes={"demo": bm25_index_dir}, concurrency=2)
    with TestClient(create_app(config, model)) as api:
        asked = {"question": QUESTION, "index": "demo", "strategy": "oner"}
        with ThreadPoolExecutor(4) as pool:
            replies = list(pool.map(lambda _: api.post("/v1/answer", json=asked), range(6)))
    assert [r.status_code for r in replies] == [200] * 6
    assert len(overlaps) >= 6 and not any(overlaps)
