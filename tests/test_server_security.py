"""What a client cannot make the server do: name a server file through strategy options, send
a body past the limit by any framing, or make the server read a body before it authenticates.
Real server on 127.0.0.1 (uvicorn) for the framing cases: the test client would not chunk."""

from __future__ import annotations

import json
import select
import socket
import time

import pytest

pytest.importorskip("fastapi")
from conftest import serving  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from ragteam.llm import FakeModel  # noqa: E402
from ragteam.server import ServerConfig, create_app  # noqa: E402

QUESTION = "In which village was the engineer who built the Wrenhold Lighthouse born?"


def _client(index_dir, **settings):
    config = ServerConfig(indexes={"demo": index_dir}, **settings)
    return TestClient(create_app(config, FakeModel(lambda m, p: "Hevik")))


@pytest.mark.parametrize("path", ["/v1/answer", "/v1/answer/stream"])
def test_a_request_cannot_name_the_router_state_file(bm25_index_dir, tmp_path, path):
    target = tmp_path / "victim.txt"
    target.write_text("keep me")
    body = {
        "question": QUESTION,
        "index": "demo",
        "strategy": "adaptive",
        "options": {"state": str(target)},
    }
    response = _client(bm25_index_dir, router_state=tmp_path / "router.json").post(path, json=body)
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert "cannot be set by a request" in detail and "state" in detail
    assert str(target) not in detail  # nothing about the path is told back
    assert target.read_text() == "keep me"
    assert not (tmp_path / "victim.txt.lock").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["victim.txt"]


def test_numeric_and_switch_options_are_still_settable(bm25_index_dir):
    response = _client(bm25_index_dir).post(
        "/v1/answer",
        json={"question": QUESTION, "index": "demo", "strategy": "oner", "options": {"k": 2}},
    )
    assert response.status_code == 200
    assert len(response.json()["trace"]["steps"][0]["output"]) == 2


def test_client_settable_options_exclude_files():
    from ragteam.strategies import client_options

    assert "state" not in client_options("adaptive")
    assert "mode" in client_options("smart") and "k" in client_options("oner")


@pytest.fixture(scope="module")
def live_server(bm25_index_dir):
    """A real uvicorn server with an API key and a 64 KiB body limit."""
    config = ServerConfig(indexes={"demo": bm25_index_dir}, api_key="secret")
    with serving(create_app(config, FakeModel(lambda m, p: "Hevik"))) as port:
        yield port


def _status(port: int, head: str, chunks: list[bytes], wait: float = 10.0) -> str:
    """Send the head and `chunks` (never the end of the body), then wait for the status line:
    a server that wanted the whole body first would never answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        sock.sendall(head.encode())
        for chunk in chunks:
            # stop sending once the server has answered: writing on after its early reply
            # makes the kernel reset the connection and drop the reply unread
            if select.select([sock], [], [], 0.05)[0]:
                break
            try:
                sock.sendall(chunk)
            except (ConnectionResetError, BrokenPipeError):
                break
        reply = b""
        while b"\r\n" not in reply:
            try:
                data = sock.recv(4096)
            except (ConnectionResetError, TimeoutError):
                break
            if not data:
                break
            reply += data
    return reply.split(b"\r\n", 1)[0].decode()


def _chunks(size: int, piece: int = 16 * 1024) -> list[bytes]:
    """`size` bytes of a JSON body as HTTP chunks, without the final empty chunk."""
    body = b'{"question": "' + b"x" * size
    return [
        f"{len(body[i : i + piece]):x}\r\n".encode() + body[i : i + piece] + b"\r\n"
        for i in range(0, len(body), piece)
    ]


def test_a_chunked_body_over_the_limit_is_refused_early(live_server):
    head = (
        "POST /v1/answer HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer secret\r\n"
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    # 128 KiB sent and the body not finished: the server answers without waiting for the rest
    assert " 413 " in _status(live_server, head, _chunks(128 * 1024))


def test_an_unauthenticated_body_is_refused_before_it_is_read(live_server):
    head = (
        "POST /v1/answer HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    # one chunk of an unfinished body: refused before the server reads the rest
    assert " 401 " in _status(live_server, head, _chunks(8 * 1024))


def test_a_declared_length_over_the_limit_is_refused(live_server):
    head = (
        "POST /v1/answer HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer secret\r\n"
        "Content-Type: application/json\r\nContent-Length: 10000000\r\n\r\n"
    )
    assert " 413 " in _status(live_server, head, [b"{" * 1024])


def test_a_small_authenticated_body_still_answers(live_server):
    import httpx

    response = httpx.post(
        f"http://127.0.0.1:{live_server}/v1/answer",
        json={"question": QUESTION, "index": "demo", "strategy": "oner"},
        headers={"Authorization": "Bearer secret"},
        timeout=30,
    )
    assert response.status_code == 200 and response.json()["answer"] == "Hevik"


def test_a_client_that_leaves_stops_its_non_streaming_answer(bm25_index_dir):
    """ircot asks the model once a step; the client hangs up during the first call."""
    calls = []

    def slow(messages, params):
        calls.append(time.monotonic())
        time.sleep(0.6)
        return "The lighthouse was built by someone."  # never "So the answer is": more steps

    config = ServerConfig(indexes={"demo": bm25_index_dir})
    with serving(create_app(config, FakeModel(slow))) as port:
        body = json.dumps(
            {"question": QUESTION, "strategy": "ircot", "options": {"max_steps": 5}}
        ).encode()
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(
                b"POST /v1/answer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            time.sleep(0.3)
        time.sleep(4)
    assert 1 <= len(calls) <= 2  # without the watch: 5 steps and an answer, all for no one
