"""`ragteam cache list|clear` over a cache folder of its own (XDG_CACHE_HOME)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from ragteam.cli import app
from ragteam.commands.demo import demo_index_dir
from ragteam.common import paths
from ragteam.common.paths import cache_root
from ragteam.llm.cache import default_cache_path

runner = CliRunner()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    root = cache_root()
    assert root.is_relative_to(tmp_path)
    # each part made where its owner puts it (the names are theirs, not this test's)
    paths.merged_models_dir().mkdir(parents=True)
    (paths.merged_models_dir() / "a+b.gguf").write_bytes(b"x" * 2_000_000)
    demo_index_dir().mkdir()
    (demo_index_dir() / "manifest.json").write_text("{}")
    paths.demo_index_dir("0.0.1").mkdir()  # an older version's index counts too
    default_cache_path().write_bytes(b"y" * 1000)
    (root / "unrelated.txt").write_text("not ragteam's")
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
    assert not list(paths.merged_models_dir().iterdir()) and not demo_index_dir().exists()
    assert not paths.demo_index_dir("0.0.1").exists()
    assert default_cache_path().exists() and (cache / "unrelated.txt").exists()


def test_an_unknown_part_is_refused_before_anything_is_deleted(cache):
    result = runner.invoke(app, ["cache", "clear", "merged", "everything"])
    assert result.exit_code != 0 and "unknown cache part 'everything'" in result.output
    assert (paths.merged_models_dir() / "a+b.gguf").exists()
