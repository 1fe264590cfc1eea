"""Defects of the hardening probe, each with the check that fails before its fix."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ragteam.cli import app
from ragteam.llm import Request

runner = CliRunner()


def test_a_tools_module_in_the_current_folder_is_found(tmp_path, monkeypatch):
    (tmp_path / "probe_tools_here.py").write_text(
        'def weather(city: str) -> str:\n    """The weather.\n\n    Args:\n'
        '        city: a city\n    """\n    return city\n'
    )
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["tools", "--tools", "probe_tools_here:weather"])
    assert result.exit_code == 0, result.output
    assert "weather" in result.output


def test_a_tools_module_that_raises_at_import_is_a_message(tmp_path, monkeypatch):
    (tmp_path / "probe_tools_broken.py").write_text("raise RuntimeError('boom')\n")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["tools", "--tools", "probe_tools_broken:x"])
    assert result.exit_code == 2 and "boom" in result.output
    assert "Traceback" not in result.output


def test_short_roles_must_be_smart_roles(tmp_path):
    result = runner.invoke(
        app,
        [
            "train",
            "fit",
            "--data",
            str(tmp_path),
            "--out",
            str(tmp_path / "o"),
            "--short-roles",
            "planner",
        ],
    )
    assert result.exit_code == 2 and "not a SMART role" in result.output


def test_a_fit_that_fails_before_training_leaves_no_run(tmp_path):
    from ragteam.smart.training.fit import FitSettings, fit

    data = tmp_path / "traj"
    data.mkdir()
    (data / "long.jsonl").write_text("not json\n")
    (data / "short.jsonl").write_text("")
    out = tmp_path / "run"
    try:
        fit(data, out, FitSettings(stages=("long",)))
    except Exception as exc:  # the malformed line is an InputError before the base is loaded
        assert "long.jsonl:1" in str(exc)
    assert not (out / "settings.json").exists()


def test_eval_of_an_empty_dataset_exits_non_zero(tmp_path, bm25_index_dir):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = runner.invoke(
        app,
        [
            "eval",
            "--data",
            str(empty),
            "--index",
            str(bm25_index_dir),
            "-s",
            "nor",
            "--out",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code != 0


def test_eval_where_every_row_fails_exits_non_zero(tmp_path, bm25_index_dir):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "q1", "question": "Who?", "answers": ["x"]}) + "\n")
    result = runner.invoke(
        app,
        [
            "eval",
            "--data",
            str(data),
            "--index",
            str(bm25_index_dir),
            "-s",
            "oner",
            "--model",
            "openai:nothing",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--retries",
            "0",
            "--timeout",
            "2",
            "--out",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code == 1 and "failed" in result.output


def test_a_trickling_server_is_cut_off_at_the_deadline():
    """One byte every 0.2 s keeps every read within its timeout; the whole reply must not."""
    import socket
    import threading
    import time

    import pytest

    from ragteam.errors import ModelError
    from ragteam.llm.openai_compat import OpenAICompatModel

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    stop = threading.Event()

    def trickle():
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
        )
        while not stop.is_set():
            try:
                conn.sendall(b" ")
            except OSError:
                break
            time.sleep(0.2)
        conn.close()

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    model = OpenAICompatModel(
        "m", base_url=f"http://127.0.0.1:{port}/v1", timeout=1.0, max_retries=0
    )
    started = time.monotonic()
    with pytest.raises(ModelError, match="timed out"):
        model.complete(Request([{"role": "user", "content": "hi"}]))
    assert time.monotonic() - started < 5
    stop.set()
    listener.close()


def test_a_tool_schema_that_cannot_validate_is_skipped_or_an_observation():
    from ragteam.tools.base import Tool, ToolBox
    from ragteam.tools.mcp import _schema_problem

    broken = {"type": "object", "properties": {"city": {"type": 42}}}
    assert "invalid" in _schema_problem(broken)
    assert _schema_problem({"type": "object", "properties": {"city": {"type": "string"}}}) == ""
    box = ToolBox([Tool("weather", "w", broken, lambda **kw: "sunny")])
    result = box._run("weather", {"city": "Orlen"})
    assert result.error and "unusable schema" in result.error


def test_a_wrong_shaped_or_undecodable_results_line_is_a_message(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    good = {"id": "q1", "strategy": "oner", "metrics": {"f1": 1.0}, "cost": {}, "wall_seconds": 1}
    for bad in (b'{"id": "q2", "strategy": "oner"}\n', b'["a list"]\n', b'{"id": "\xff"}\n'):
        (run / "results.jsonl").write_bytes(json.dumps(good).encode() + b"\n" + bad)
        result = runner.invoke(app, ["report", str(run)])
        assert result.exit_code == 2, result.output
        assert "results.jsonl:2" in result.output and "Traceback" not in result.output


def test_the_manifest_protects_itself_and_rebuild_hints_keep_settings(tmp_path):
    import pytest

    from ragteam.commands.demo import demo_corpus_path
    from ragteam.errors import IndexUnusable
    from ragteam.retrieval import build_index, load_index
    from ragteam.retrieval.index import rebuild_hint

    out = tmp_path / "idx"
    build_index(demo_corpus_path(), out, retriever="bm25", bm25_stemmer="none", passage_words=0)
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    hint = rebuild_hint(out, manifest)
    assert "--bm25-stemmer none" in hint and "--passage-tokens 0" in hint
    from ragteam.retrieval.manifest import seal

    sizes_only = {name: entry["size"] for name, entry in manifest["files"].items()}
    edits = [
        {"files": {}},
        {"files": sizes_only},  # D11r: this turned the checksums off
        {"params": {**manifest["params"], "bm25": {"stemmer": "english"}}},  # D11r
        {"source": "c.jsonl"},
    ]
    for edit in edits:  # any edit by hand is refused, whatever it changed
        manifest_path.write_text(json.dumps({**manifest, **edit}))
        with pytest.raises(IndexUnusable, match="edited after the build"):
            load_index(out)
    manifest_path.write_text(json.dumps(seal({**manifest, "files": {}})))  # sealed, yet cut
    with pytest.raises(IndexUnusable, match="does not list"):
        load_index(out)
    manifest_path.write_text(json.dumps(seal({**manifest, "files": sizes_only})))
    with pytest.raises(IndexUnusable, match="wrong shape"):
        load_index(out)
    manifest_path.write_text(json.dumps(manifest))
    passages = out / "passages.jsonl"
    data = passages.read_bytes()
    passages.write_bytes(data[:40] + b"\xff" + data[41:])  # D11r: a non-UTF-8 byte
    with pytest.raises(IndexUnusable, match="changed since the build"):
        load_index(out)
    from ragteam.retrieval.passage_file import PassageFile

    read = PassageFile.scanned(passages)
    with pytest.raises(IndexUnusable, match="passages.jsonl:1 is corrupt"):
        list(read)  # even unchecked, a line that is not UTF-8 is named
    with pytest.raises(IndexUnusable, match="passages.jsonl:1 is corrupt"):
        read[0]


def test_bad_urls_commands_and_out_paths_are_messages(tmp_path, bm25_index_dir):
    bad_url = runner.invoke(
        app, ["ask", "Who?", "--model", "openai:m", "--base-url", "http://[::1", "-s", "nor"]
    )
    assert bad_url.exit_code == 2 and "not a valid URL" in bad_url.output
    bad_mcp = runner.invoke(app, ["tools", "--mcp", 'python "x'])
    assert bad_mcp.exit_code == 2 and "quote" in bad_mcp.output
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "q1", "question": "Who?", "answers": ["x"]}) + "\n")
    a_file = tmp_path / "out.txt"
    a_file.write_text("")
    out_file = runner.invoke(
        app,
        ["eval", "--data", str(data), "-s", "nor", "--model", "openai:m", "--out", str(a_file)],
    )
    assert out_file.exit_code == 2 and "is a file" in " ".join(out_file.output.split())
    for result in (bad_url, bad_mcp, out_file):
        assert "Traceback" not in result.output


def test_a_router_lock_held_too_long_is_a_message(tmp_path, monkeypatch):
    import pytest
    from filelock import FileLock

    from ragteam.router import state as router_state

    path = tmp_path / "router.json"
    held = FileLock(str(path) + ".lock")
    held.acquire()
    monkeypatch.setattr(router_state, "FileLock", lambda name, timeout: FileLock(name, timeout=0.2))
    try:
        with pytest.raises(router_state.RouterStateError, match="locked by another process"):
            router_state.append_pending(path, {"id": "x"})
    finally:
        held.release()


def test_an_mcp_server_that_never_initializes_is_stopped(monkeypatch):
    import subprocess
    import sys
    import time

    import pytest

    pytest.importorskip("mcp")
    from ragteam.tools import mcp as mcp_tools

    monkeypatch.setattr(mcp_tools, "START_SECONDS", 2)
    marker = f"ragteam-silent-{time.time_ns()}"
    command = f'{sys.executable} -c "import time; time.sleep(600)" {marker}'
    with pytest.raises(mcp_tools.MCPError, match="did not start"):
        mcp_tools.MCPServer(command, timeout=2)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        alive = subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 0
        if not alive:
            break
        time.sleep(0.2)
    assert not alive  # the silent server was stopped with the error, not left running


def test_index_build_and_eval_on_a_full_disk_are_messages_and_lose_nothing(tmp_path):
    """N8: a write the disk refuses (a real limit on file size in a child process) ends
    `index build` and `eval --out` with a message and exit 2, no traceback; the index that
    was there still loads, and the run resumes from the rows it kept."""
    from limited_disk import run_limited

    from ragteam.commands.demo import demo_corpus_path
    from ragteam.eval.rundir import RunDir
    from ragteam.retrieval import load_index

    out, run = tmp_path / "ix", tmp_path / "run"
    build = ["index", "build", str(demo_corpus_path()), "--out", str(out), "--retriever", "bm25"]
    assert run_limited(build, None).returncode == 0
    before = load_index(out).manifest.corpus_checksum
    refused = run_limited([*build, "--passage-words", "50"], max_file_bytes=4000)
    assert refused.returncode == 2, refused.stderr
    # the cache of conversions and embeddings or the index itself: whichever the disk refuses
    said = refused.stderr.replace("\n", " ")
    assert "could not write the index" in said or "could not use the conversion" in said
    assert "Traceback" not in refused.stderr
    assert load_index(out).manifest.corpus_checksum == before
    data = tmp_path / "q.jsonl"
    rows = [
        {"id": f"q{i}", "question": f"Who built lighthouse {i}?", "answers": ["x"]}
        for i in range(3)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    evaluate = ["eval", "--data", str(data), "--out", str(run), "-s", "nor", "--index", str(out)]
    cut = run_limited([*evaluate, "--no-cache"], max_file_bytes=3000)  # about 2 rows fit
    assert cut.returncode == 2, cut.stderr
    assert "could not write" in cut.stderr and "Traceback" not in cut.stderr
    kept = len(RunDir(run).rows())
    assert 0 < kept < 3
    resumed = run_limited([*evaluate, "--no-cache"], max_file_bytes=None)
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(r.id for r in RunDir(run).rows()) == ["q0", "q1", "q2"]
