"""The command line, end to end (Typer's runner, real index, real model where marked)."""

import json
import re

import pytest
from typer.testing import CliRunner

from ragteam.cli import app

runner = CliRunner()


def test_unknown_strategy_lists_valid_names(bm25_index_dir):
    result = runner.invoke(app, ["ask", "Who?", "--index", str(bm25_index_dir), "-s", "magic"])
    assert result.exit_code == 2
    assert "unknown strategy 'magic'" in result.output and "oner" in result.output


def test_empty_question(bm25_index_dir):
    result = runner.invoke(app, ["ask", "  ", "--index", str(bm25_index_dir)])
    assert result.exit_code == 2 and "empty" in result.output


def test_nonexistent_index(tmp_path):
    result = runner.invoke(app, ["ask", "Who?", "--index", str(tmp_path / "none")])
    assert result.exit_code == 2 and "ragteam index build" in result.output


def test_bad_opt():
    result = runner.invoke(app, ["ask", "Who?", "-s", "nor", "--opt", "novalue"])
    assert result.exit_code == 2 and "KEY=VALUE" in result.output


def test_index_build_and_info(tmp_path):
    src = tmp_path / "docs"
    src.mkdir()
    (src / "a.md").write_text("# Alpha\nAlpha is the first letter.")
    (src / "b.txt").write_text("Beta is the second letter.")
    out = tmp_path / "idx"
    result = runner.invoke(
        app, ["index", "build", str(src), "--out", str(out), "--retriever", "bm25"]
    )
    assert result.exit_code == 0, result.output
    assert "2 new" in result.output and "2 passages from 2 documents" in result.output
    info = runner.invoke(app, ["index", "info", str(out)])
    assert info.exit_code == 0 and '"passage_count": 2' in info.output and "loads" in info.output


def test_strategies_command():
    result = runner.invoke(app, ["strategies"])
    assert result.exit_code == 0 and "oner" in result.output.split()


@pytest.mark.integration
def test_ask_json_with_the_embedded_model(hybrid_index_dir):
    result = runner.invoke(
        app,
        [
            "ask",
            "Who founded the company that runs the MV Wrenhold?",
            "--index",
            str(hybrid_index_dir),
            "--strategy",
            "oner",
            "--json",
            "--trace",
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["strategy"] == "oner" and payload["answer"]
    # one call, or two when the first reply copied the worked example and was asked again
    kinds = [s["kind"] for s in payload["trace"]["steps"]]
    assert kinds[0] == "retrieve" and set(kinds[1:]) == {"llm", "support"}
    assert payload["cost"]["llm_calls"] == len(kinds) - 2 in (1, 2)
    assert payload["citations"]


@pytest.mark.integration
def test_demo_builds_its_index_and_answers():
    result = runner.invoke(app, ["demo"])
    assert result.exit_code == 0, result.output
    assert "Wrenhold Lighthouse" in result.output and "citations" in result.output
    assert re.search(r"\b\d+ model calls? \(\d+ cached\)", result.output)
    again = runner.invoke(app, ["demo"])  # reuses the index and the LLM cache
    assert again.exit_code == 0 and "building the demo index" not in again.output
    calls, cached = re.search(r"\b(\d+) model calls? \((\d+) cached\)", again.output).groups()
    assert calls == cached != "0"


def test_progress_off_a_terminal_is_lines_only_each_naming_its_step(tmp_path):
    """Off a terminal (nohup, CI) a sync printed its plain progress lines and then rich's last
    frame of every bar too; the lines did not say which step they counted."""
    import subprocess
    import sys

    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(3):
        (docs / f"n{i}.txt").write_text(f"Note {i}: the ferry leaves at {i + 1} o'clock.")
    done = subprocess.run(
        [sys.executable, "-m", "ragteam", "index", "sync", str(docs), "--out", str(tmp_path / "ix")]
        + ["--retriever", "bm25"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "━" not in done.stderr
    assert "index sync: read 3/3 (100%)" in done.stderr


def test_the_index_commands_start_without_the_strategies():
    """`ragteam index ...` (a sync at the command line, often from a watcher or cron) imported
    every strategy, the reader and the model backends to declare `ask`'s flags: a second a run."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom ragteam.launch import main\n"
        "try:\n    main(['index', 'formats'])\nexcept SystemExit as e:\n    assert not e.code\n"
        "print('strategies imported:', 'ragteam.strategies' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "strategies imported: False" in done.stdout
    assert ".pdf" in done.stdout  # the command ran
    whole = subprocess.run(
        [sys.executable, "-m", "ragteam", "--version"], capture_output=True, text=True, timeout=120
    )
    assert whole.returncode == 0 and whole.stdout.startswith("ragteam "), whole.stderr
