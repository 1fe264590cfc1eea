"""Retriever kinds are registered like every other named thing: a new kind is one object
and one registration, an index records it, and an index whose kind is gone says so."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from ragteam.errors import IndexUnusable, UnknownName
from ragteam.retrieval import KINDS, build_index, load_index, retriever_names
from ragteam.retrieval.index import settings_of
from ragteam.retrieval.manifest import seal


def _example():
    """The retriever kind of docs/extending.md (`word_count.py`), run from the page."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "extending.md").read_text()
    code = next(b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "word_count" in b)
    namespace: dict = {}
    exec(compile(code, "word_count.py", "exec"), namespace)  # noqa: S102 - our own page
    return namespace["KIND"]


@pytest.fixture
def wordcount():
    KINDS.register("wordcount", _example())
    yield
    KINDS.unregister("wordcount")


def _corpus(tmp_path: Path) -> Path:
    src = tmp_path / "c.jsonl"
    rows = [
        {"id": "a", "title": "", "text": "the lighthouse keeper rang the bell"},
        {"id": "b", "title": "", "text": "a river runs past the mill"},
        {"id": "c", "title": "", "text": "the keeper of the river mill"},
    ]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return src


def test_a_registered_kind_builds_records_and_loads(tmp_path, wordcount):
    assert "wordcount" in retriever_names()
    out = tmp_path / "idx"
    manifest = build_index(_corpus(tmp_path), out, retriever="wordcount")
    assert manifest["searchers"] == ["wordcount"]
    assert manifest["params"]["wordcount"] == {"lowercase": True}
    assert "wordcount.json" in manifest["files"]  # its file is listed and checked
    index = load_index(out)
    assert [p.id for p in index.retrieve("river keeper mill", 2)] == ["c", "b"]
    assert settings_of(index.manifest).retriever == "wordcount"
    # a changed file of the kind is caught like any index file
    (out / "wordcount.json").write_text("[]")
    with pytest.raises(IndexUnusable, match="wordcount.json"):
        load_index(out)


def test_an_index_whose_kind_is_not_installed_says_so(tmp_path, wordcount):
    out = tmp_path / "idx"
    build_index(_corpus(tmp_path), out, retriever="wordcount")
    KINDS.unregister("wordcount")
    with pytest.raises(IndexUnusable, match="retriever 'wordcount', which is not installed"):
        load_index(out)
    KINDS.register("wordcount", _example())  # for the fixture's teardown


def test_an_unknown_retriever_lists_the_known_ones(tmp_path):
    with pytest.raises(UnknownName, match="bm25.*dense.*hybrid"):
        build_index(_corpus(tmp_path), tmp_path / "idx", retriever="wordcount")


def _resealed(source: Path, out: Path, edit) -> Path:
    """A copy of the index at `source` whose manifest `edit(data)` changed, sealed again (as a
    faulty build, or an older ragteam, would have written it)."""
    if source != out:
        shutil.copytree(source, out)
    data = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps(seal(edit(data) or data)))
    return out


def test_a_kinds_recorded_settings_are_checked_by_the_kind(tmp_path, wordcount):
    out = tmp_path / "idx"
    build_index(_corpus(tmp_path), out, retriever="wordcount")
    _resealed(out, out, lambda d: d["params"].update(wordcount={"lowercase": "maybe"}))
    with pytest.raises(IndexUnusable, match=r"wrong shape \(params.wordcount: lowercase"):
        load_index(out)


@pytest.mark.integration
def test_a_dense_record_of_the_wrong_shape_is_named(hybrid_index_dir, tmp_path):
    out = _resealed(
        hybrid_index_dir, tmp_path / "hybrid", lambda d: d["params"]["dense"].update(kind="cube")
    )
    with pytest.raises(IndexUnusable, match=r"wrong shape \(params.dense: .*cube"):
        load_index(out)


@pytest.mark.integration
def test_a_format_2_index_still_loads_as_built(hybrid_index_dir, tmp_path):
    """Format 2 kept dense's settings at the top of the manifest; it is read, not rebuilt."""

    def as_format_2(data: dict) -> dict:
        params = dict(data["params"])
        return {**data, "format_version": 2, "dense": params.pop("dense"), "params": params}

    out = _resealed(hybrid_index_dir, tmp_path / "hybrid", as_format_2)
    old, new = load_index(out), load_index(hybrid_index_dir)
    assert old.manifest.records == new.manifest.records
    assert settings_of(old.manifest) == settings_of(new.manifest)
    query = "a question about a river"
    assert [p.id for p in old.retrieve(query, 5)] == [p.id for p in new.retrieve(query, 5)]
