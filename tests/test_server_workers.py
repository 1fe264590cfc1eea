"""`ragteam serve --workers N`: more than one process answering on one port, each from the
index on disk, each following a sync made outside it."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")

from ragteam.errors import InputError  # noqa: E402
from ragteam.retrieval import sync_folder  # noqa: E402
from ragteam.retrieval.index import IndexSettings  # noqa: E402
from ragteam.server.config import ServerConfig  # noqa: E402
from ragteam.server.cores import process_share  # noqa: E402
from ragteam.server.workers import check_workers  # noqa: E402

QUESTION = "Where does the harbour ferry leave from?"


def test_what_workers_cannot_share_is_refused_before_anything_starts(tmp_path):
    check_workers(ServerConfig(watch=True), 1)  # one process may watch
    with pytest.raises(InputError, match="--watch"):
        check_workers(ServerConfig(watch=True), 2)
    with pytest.raises(InputError, match="--router-state"):
        check_workers(ServerConfig(router_state=tmp_path / "router.json"), 3)
    assert process_share(10_000) == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pinned(url: str, wanted: int, seconds: float = 60.0) -> dict[str, httpx.Client]:
    """One keep-alive client per worker: fresh connections until `wanted` processes answered."""
    clients: dict[str, httpx.Client] = {}
    deadline = time.time() + seconds
    while len(clients) < wanted and time.time() < deadline:
        client = httpx.Client(base_url=url, timeout=60)
        try:
            health = client.get("/healthz").json()
        except httpx.HTTPError:
            client.close()
            time.sleep(0.2)
            continue
        assert health["workers"] == wanted
        if health["worker"] in clients:
            client.close()
        else:
            clients[health["worker"]] = client
    return clients


def _answer(client: httpx.Client) -> str:
    reply = client.post("/v1/answer", json={"question": QUESTION, "index": "docs"})
    assert reply.status_code == 200, reply.text
    return reply.json()["answer"]


def test_two_workers_answer_and_each_follows_a_sync_made_outside(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    notes = folder / "ferry.txt"
    notes.write_text("The harbour ferry leaves from Pier 4 every morning at nine.\n")
    (folder / "other.txt").write_text("The lighthouse was repainted white in the spring.\n")
    index = tmp_path / "ix"
    sync_folder(folder, index, index=IndexSettings(retriever="bm25"))
    port = _free_port()
    command = [sys.executable, "-m", "ragteam", "serve", "--index", f"docs={index}"]
    server = subprocess.Popen([*command, "--workers", "2", "--port", str(port)])
    clients: dict[str, httpx.Client] = {}
    try:
        clients = _pinned(f"http://127.0.0.1:{port}", 2)
        assert len(clients) == 2  # two processes, each named by /healthz (not by its pid)
        assert not any(str(server.pid) in w for w in clients)
        assert all("Pier 4" in _answer(c) for c in clients.values())
        notes.write_text("The harbour ferry leaves from Pier 9 every morning at nine.\n")
        sync_folder(folder, index)  # outside the server: each worker loads the new generation
        assert all("Pier 9" in _answer(c) for c in clients.values())
    finally:
        for client in clients.values():
            client.close()
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0


def test_a_parent_killed_outright_leaves_no_handed_over_config_behind(tmp_path):
    """The config (which may hold the API key) goes to the workers in their environment: a
    `kill -9` of the whole server leaves nothing of it in the temporary folder."""
    import os

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "ferry.txt").write_text("The harbour ferry leaves from Pier 4.\n")
    sync_folder(folder, tmp_path / "ix", index=IndexSettings(retriever="bm25"))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    port = _free_port()
    command = [sys.executable, "-m", "ragteam", "serve", "--index", f"docs={tmp_path / 'ix'}"]
    server = subprocess.Popen(
        [*command, "--workers", "2", "--port", str(port)],
        env={**os.environ, "TMPDIR": str(scratch), "RAGTEAM_API_KEY": "s3cret-key"},
        start_new_session=True,
    )
    try:
        assert len(_pinned(f"http://127.0.0.1:{port}", 2)) == 2  # both workers are answering
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
    left = [p for p in scratch.rglob("*") if p.is_file()]
    assert not [p for p in left if b"s3cret-key" in p.read_bytes()]
    assert not list(scratch.glob("ragteam-serve-*"))
