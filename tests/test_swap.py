"""Nothing the user owns is deleted by a build or a sync (C1 of the hardening round 3), and a
swap killed at any rename or unlink leaves an index that loads (M1): the fault is injected at
each such call in turn, not left to a random kill."""

from __future__ import annotations

import json

import pytest

from ragteam.errors import InputError
from ragteam.retrieval import build_index, load_index, swap, sync_folder
from ragteam.retrieval.index import IndexSettings

BM25 = IndexSettings(retriever="bm25")


def _docs(folder):
    folder.mkdir(parents=True)
    (folder / "ferry.md").write_text("# Ferry\n\nThe ferry leaves at nine from pier two.\n")
    (folder / "harbour.md").write_text("# Harbour\n\nThe harbour master is Ana Lind.\n")
    return folder


def _jsonl(path):
    rows = [
        {"id": "a", "title": "Ferry", "text": "The ferry leaves at nine."},
        {"id": "b", "title": "Harbour", "text": "The harbour master is Ana Lind."},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_sync_of_a_folder_inside_the_index_is_refused_and_keeps_the_folder(tmp_path):
    kb = tmp_path / "kb"
    sync_folder(_docs(tmp_path / "elsewhere"), kb, index=BM25)
    mydocs = _docs(kb / "mydocs")  # the user keeps their documents inside the index folder
    with pytest.raises(InputError, match="inside the index folder"):
        sync_folder(mydocs, kb, index=BM25)
    assert sorted(p.name for p in mydocs.iterdir()) == ["ferry.md", "harbour.md"]
    assert load_index(kb).manifest.passage_count == 2  # the index is as it was


def test_build_of_a_jsonl_inside_the_index_is_refused_and_keeps_the_file(tmp_path):
    kbj = tmp_path / "kbj"
    build_index(_jsonl(tmp_path / "first.jsonl"), kbj, retriever="bm25")
    corpus = _jsonl(kbj / "corpus.jsonl")
    with pytest.raises(InputError, match="inside the index folder"):
        build_index(corpus, kbj, retriever="bm25")
    assert corpus.is_file() and len(corpus.read_text().splitlines()) == 2


def test_an_index_inside_its_source_folder_is_refused_too(tmp_path):
    docs = _docs(tmp_path / "docs")
    with pytest.raises(InputError, match="inside the folder it indexes"):
        sync_folder(docs, docs / "ix", index=BM25)
    link = tmp_path / "link"
    link.symlink_to(docs)
    with pytest.raises(InputError):  # through a link, both ways
        sync_folder(docs, link / "ix", index=BM25)
    assert not (docs / "ix").exists()


def test_a_rebuild_keeps_every_file_the_index_did_not_write(tmp_path):
    ix = tmp_path / "ix"
    build_index(_jsonl(tmp_path / "c.jsonl"), ix, retriever="bm25")
    (ix / "notes.txt").write_text("mine")
    (ix / "keep").mkdir()
    (ix / "keep" / "a.pdf").write_bytes(b"%PDF-1.4 mine")
    build_index(tmp_path / "c.jsonl", ix, retriever="bm25")
    assert (ix / "notes.txt").read_text() == "mine"
    assert (ix / "keep" / "a.pdf").read_bytes() == b"%PDF-1.4 mine"
    assert not list(tmp_path.glob(".ix.old-*"))
    load_index(ix)


class _Killed(BaseException):
    """Stands for a kill: nothing after the faulted call runs in the swap."""


def _faulty(monkeypatch, at: int) -> list[str]:
    """Make the `at`-th rename or removal of the swap raise `_Killed` (0: none)."""
    calls: list[str] = []
    real_rename, real_remove = swap._rename, swap._remove

    def counted(real, what):
        def call(*paths):
            calls.append(f"{what} {' -> '.join(p.name for p in paths)}")
            if len(calls) == at:
                raise _Killed(calls[-1])
            real(*paths)

        return call

    monkeypatch.setattr(swap, "_rename", counted(real_rename, "rename"))
    monkeypatch.setattr(swap, "_remove", counted(real_remove, "remove"))
    return calls


def test_a_swap_killed_at_any_rename_or_unlink_leaves_a_loadable_index(tmp_path, monkeypatch):
    corpus = _jsonl(tmp_path / "c.jsonl")
    ix = tmp_path / "ix"
    build_index(corpus, ix, retriever="bm25")
    (ix / "notes.txt").write_text("mine")
    with monkeypatch.context() as patch:
        total = _faulty(patch, at=0)
        build_index(corpus, ix, retriever="bm25")
    assert len(total) >= 4  # two renames, the old generation's files, a foreign file moved
    for at in range(1, len(total) + 1):
        with monkeypatch.context() as patch:
            calls = _faulty(patch, at=at)
            with pytest.raises(_Killed):
                build_index(corpus, ix, retriever="bm25")
        swap.recover(ix, alive=lambda pid: False)  # the next run: the killed writer is gone
        assert load_index(ix).manifest.passage_count == 2, calls
        assert (ix / "notes.txt").read_text() == "mine", calls
        assert not list(tmp_path.glob(".ix.old-*")), calls


def test_index_info_puts_back_an_index_a_kill_left_beside_its_name(tmp_path):
    """N-L3: a sync killed between its two renames leaves the old index as `.ix.old-PID` and no
    `ix`; `index info` said "no index" until a load put it back. It puts it back itself."""
    import subprocess

    from typer.testing import CliRunner

    from ragteam.cli import app

    ix = tmp_path / "ix"
    build_index(_jsonl(tmp_path / "c.jsonl"), ix, retriever="bm25")
    writer = subprocess.Popen(["true"])  # a process that has ended: the killed writer
    writer.wait()
    ix.rename(tmp_path / f".ix.old-{writer.pid}")
    shown = CliRunner().invoke(app, ["index", "info", str(ix)])
    assert shown.exit_code == 0, shown.output
    assert "index loads" in shown.output and '"passage_count": 2' in shown.output
    assert ix.is_dir() and not list(tmp_path.glob(".ix.old-*"))
