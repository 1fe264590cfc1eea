"""`ragteam cache list|clear` over a cache folder of its own (XDG_CACHE_HOME)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from ragteam.cli import app
from ragteam.commands.cache import cache_root

runner = CliRunner()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    root = cache_root()
    assert root.is_relative_to(tmp_path)
    (root / "merged").mkdir(parents=True)
    (root / "merged" / "a+b.gguf").write_bytes(b"x" * 2_000_000)
    (root / "demo-index-0.1.0").mkdir()
    (root / "demo-index-0.1.0" / "manifest.json").write_text("{}")
    (root / "llm-cache.sqlite").write_bytes(b"y" * 1000)
    return root


def test_list_shows_each_part_and_its_size(cache):
    result = runner.invoke(app, ["cache", "list"])
    assert result.exit_code == 0, result.output
    merged = next(ln for ln in result.output.splitlines() if ln.startswith("merged"))
    assert "1 entries" in merged and "2.0 MB" in merged
    assert str(cache) in result.output.replace("\n", "")


def test_clear_removes_only_the_parts_named(cache):
    result = runner.invoke(app, ["cache", "clear", "merged", "demo"])
    assert result.exit_code == 0, result.output
    assert "cleared merged: 2.0 MB" in result.output
    assert not list((cache / "merged").iterdir()) and not (cache / "demo-index-0.1.0").exists()
    assert (cache / "llm-cache.sqlite").exists()


def test_an_unknown_part_is_refused_before_anything_is_deleted(cache):
    result = runner.invoke(app, ["cache", "clear", "merged", "everything"])
    assert result.exit_code != 0 and "unknown cache part 'everything'" in result.output
    assert (cache / "merged" / "a+b.gguf").exists()
