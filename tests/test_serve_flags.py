"""`serve` and `mcp` take their settings as flags of `ServerConfig`'s fields, declared once
there: each flag reaches its field, `serve`-only ones are not `mcp`'s, the key clients send is
read from the environment variable named, and bad values are refused before anything runs."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from ragteam.cli import app
from ragteam.server.config import CONCURRENCY, ServerConfig

runner = CliRunner()


@pytest.fixture
def served(monkeypatch):
    seen: list[tuple[ServerConfig, int, int]] = []
    monkeypatch.setattr(
        "ragteam.commands.serve._serve",
        lambda config, port, workers: seen.append((config, port, workers)),
    )
    return seen


def test_serve_flags_build_the_servers_config(served, monkeypatch, tmp_path):
    monkeypatch.setenv("MY_KEY", "s3cret")
    args = ["serve", "--index", f"docs={tmp_path}", "--index", str(tmp_path / "more"),
            "--runs", str(tmp_path), "--queue", "3", "--queue-timeout", "9", "--cors",
            "http://a.test", "--cors", "http://b.test", "--client-key-env", "MY_KEY",
            "--model", "openai:x", "--n-ctx", "4096", "--watch", "--port", "9001"]  # fmt: skip
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    config, port, workers = served[-1]
    assert config.indexes == {"docs": tmp_path, "more": tmp_path / "more"}
    assert (config.runs_dir, config.queue_size, config.queue_timeout) == (tmp_path, 3, 9.0)
    assert config.cors_origins == ["http://a.test", "http://b.test"] and config.watch
    assert config.api_key == "s3cret" and config.model == "openai:x"
    assert config.model_options.n_ctx == 4096 and (port, workers) == (9001, 1)
    # the command line's own defaults: as many answers at once as cores, the usual key variable
    monkeypatch.delenv("RAGTEAM_API_KEY", raising=False)
    assert runner.invoke(app, ["serve"]).exit_code == 0
    plain = served[-1][0]
    assert plain.concurrency == CONCURRENCY and plain.api_key is None and plain.indexes == {}
    assert plain.host == "127.0.0.1" and plain.queue_size == 8


def test_mcp_takes_the_shared_flags_only_and_refuses_bad_ones(monkeypatch, tmp_path):
    got: list[ServerConfig] = []

    class Stop(Exception):
        pass

    def service(config):
        got.append(config)
        raise Stop

    monkeypatch.setattr("ragteam.server.service.Service", service)
    monkeypatch.setenv("RAGTEAM_API_KEY", "k")
    done = runner.invoke(app, ["mcp", "--index", f"d={tmp_path}", "--queue", "2"])
    assert isinstance(done.exception, Stop), done.output
    assert got[-1].indexes == {"d": tmp_path} and got[-1].queue_size == 2
    assert got[-1].api_key is None  # stdio has no clients to tell apart
    for serve_only in ("--runs", "--host", "--concurrency", "--cors", "--watch"):
        refused = runner.invoke(app, ["mcp", serve_only, "x"])
        assert refused.exit_code == 2 and "No such option" in refused.output, serve_only
    bad = runner.invoke(app, ["serve", "--queue", "-1"])
    assert bad.exit_code == 2 and "--queue" in bad.output
    twice = runner.invoke(app, ["serve", "--index", f"a={tmp_path}", "--index", f"a={tmp_path}"])
    assert twice.exit_code != 0 and "two indexes are named 'a'" in twice.output
