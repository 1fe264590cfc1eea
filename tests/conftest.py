"""Shared fixtures: real indexes on disk over the bundled demo corpus, the real embedded model,
and a real llama.cpp OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from ragteam.commands.demo import demo_corpus_path

DATA = Path(__file__).resolve().parent / "data"  # small attributed slices: see data/README.md


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Keep the LLM cache of tests out of the user's cache directory."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))


@pytest.fixture(scope="session")
def bm25_index_dir(tmp_path_factory) -> Path:
    from ragteam.retrieval import build_index

    out = tmp_path_factory.mktemp("idx") / "bm25"
    build_index(demo_corpus_path(), out, retriever="bm25")
    return out


@pytest.fixture(scope="session")
def hybrid_index_dir(tmp_path_factory) -> Path:
    from ragteam.retrieval import build_index

    out = tmp_path_factory.mktemp("idx") / "hybrid"
    build_index(demo_corpus_path(), out, retriever="hybrid")
    return out


@pytest.fixture
def folder_index(tmp_path):
    """A BM25 index synced from a folder of real files: `folder_index({name: text})` writes
    each file in `tmp_path / "docs"` and returns the index's path."""
    from ragteam.retrieval import sync_folder
    from ragteam.retrieval.index import IndexSettings

    def made(files: dict[str, str]) -> Path:
        docs = tmp_path / "docs"
        docs.mkdir(exist_ok=True)
        for name, text in files.items():
            (docs / name).write_text(text, encoding="utf-8")
        sync_folder(docs, tmp_path / "ix", index=IndexSettings(retriever="bm25"))
        return tmp_path / "ix"

    return made


@pytest.fixture
def html_index(folder_index):
    """A BM25 index synced from one real HTML page: `html_index(name, title, body)` writes
    `name` (`<title>` and `<body>` as given) in a folder of its own and returns the index."""

    def made(name: str, title: str, body: str) -> Path:
        page = f"<html><head><title>{title}</title></head><body>{body}</body></html>"
        return folder_index({name: page})

    return made


@pytest.fixture(scope="session")
def embedded_model():
    from ragteam.llm.llamacpp import LlamaCppModel

    return LlamaCppModel(None, n_ctx=2048)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server():
    """`python -m llama_cpp.server` serving the embedded GGUF; yields its base URL."""
    with _llama_cpp_server("smollm2") as base:
        yield base


@pytest.fixture(scope="session")
def embedding_server():
    """llama.cpp's server computing embeddings (mean-pooled) with the embedded GGUF."""
    with _llama_cpp_server("smollm2-embed", "--embedding", "true") as base:
        yield base


@contextmanager
def _llama_cpp_server(alias: str, *extra: str):
    from ragteam.llm.llamacpp import embedded_model_path

    port = _free_port()
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(embedded_model_path()),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--model_alias",
        alias,
        *extra,
    ]
    log = open(os.devnull, "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 120
    try:
        while time.time() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}")
            try:
                if httpx.get(f"{base}/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        else:
            pytest.fail("llama_cpp.server did not start within 120 s")
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="session")
def hotpot_bm25_dir(tmp_path_factory) -> Path:
    """BM25 over a 260-paragraph slice of the HotpotQA corpus (the gold paragraphs of the
    first 10 dev300 questions plus seeded distractors)."""
    from ragteam.retrieval import build_index

    corpus = DATA / "hotpotqa" / "corpus_slice.jsonl"
    out = tmp_path_factory.mktemp("idx") / "hotpot-bm25"
    build_index(corpus, out, retriever="bm25", passage_words=0)
    return out


@pytest.fixture(scope="session")
def dev3() -> list[dict]:
    import json

    path = DATA / "hotpotqa" / "dev10.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()[:3]]


@contextmanager
def serving(app):
    """An ASGI app served by uvicorn on a free 127.0.0.1 port for the block; yields the port."""
    import threading

    import uvicorn

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=10)
