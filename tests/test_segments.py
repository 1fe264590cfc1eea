"""Index segments: a BM25 index takes a few changed files as a new segment, searched with
statistics over every live passage, so its rankings and scores are those of an index written
fresh from the same folder; a kill at any step leaves a loadable index."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from ragteam.errors import IndexUnusable, InputError
from ragteam.retrieval import segment_sync, segments
from ragteam.retrieval.index import load_index
from ragteam.retrieval.kinds import IndexSettings
from ragteam.retrieval.sync import sync_folder

BM25 = IndexSettings(retriever="bm25")
WORDS = [f"w{i}" for i in range(300)] + ["harbour", "master", "pilot", "tide"]


def _text(rng: random.Random, sentences: int) -> str:
    return ". ".join(" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(sentences))


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rng = random.Random(7)
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    for n in range(30):
        where = docs / "sub" if n % 4 == 0 else docs
        (where / f"f{n:02d}.txt").write_text(_text(rng, rng.randint(2, 25)))
    return docs


def _same_as_fresh(docs: Path, index_dir: Path, tmp_path: Path, queries: int = 60) -> None:
    """Every query's top 10 (ids, scores, order) equal an index written fresh."""
    fresh = tmp_path / "fresh"
    shutil.rmtree(fresh, ignore_errors=True)
    sync_folder(docs, fresh, index=BM25, fresh=True)
    a, b = load_index(index_dir), load_index(fresh)
    assert len(a.passages) == len(b.passages) == a.manifest.passage_count
    assert a.manifest.document_count == b.manifest.document_count
    rng = random.Random(11)
    for _ in range(queries):
        query = " ".join(rng.choice(WORDS) for _ in range(4))
        got = [(p.id, p.score, p.text) for p in a.retrieve(query, 10, "bm25")]
        assert got == [(p.id, p.score, p.text) for p in b.retrieve(query, 10, "bm25")], query
        raw = a.searchers["bm25"].search(query, 10)
        assert [s for _, s in raw] == [s for _, s in b.searchers["bm25"].search(query, 10)]


def _killed(*_args: object) -> None:
    raise KeyboardInterrupt


def _sync(docs: Path, out: Path, **kw: object):  # noqa: ANN202
    return sync_folder(docs, out, index=BM25, **kw)


def test_changes_become_segments_scored_as_a_fresh_index(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "ix"
    assert _sync(folder, out).rewritten
    rng = random.Random(3)
    (folder / "f01.txt").write_text(_text(rng, 4) + " harbour master")
    report = _sync(folder, out)
    assert (report.segment, report.rewritten) == ("segments/0001", True)
    written = [p for p in load_index(out).passages if p.doc_id == "f01.txt"]
    assert report.tokenized == len(written) >= 1
    assert report.changes["changed"] == ["f01.txt"]
    _same_as_fresh(folder, out, tmp_path)
    (folder / "f02.txt").unlink()  # deleted
    (folder / "f03.txt").rename(folder / "g03.txt")  # renamed
    (folder / "new.txt").write_text(_text(rng, 3) + " tide pilot")  # new
    report = _sync(folder, out)
    assert report.segment == "segments/0002"
    _same_as_fresh(folder, out, tmp_path)
    index = load_index(out)
    assert index.passage("f02.txt") is None and index.passage("f02.txt#0") is None
    assert index.passage("g03.txt") or index.passage("g03.txt#0")
    assert index.mentions("pilot") and not index.mentions("zebra")
    before, after = index.neighbours("f01.txt#1")
    assert [p.id for p in before] == ["f01.txt#0"] and all(p.doc_id == "f01.txt" for p in after)
    # nothing changed: nothing written
    assert not _sync(folder, out).rewritten
    # --merge folds the segments into one whole index, with the same rankings
    merged = _sync(folder, out, merge=True)
    assert merged.rewritten and not merged.segment and not load_index(out).manifest.segments
    assert not (out / "segments").exists()
    _same_as_fresh(folder, out, tmp_path)


def test_a_deleted_word_is_unknown_again(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "ix"
    (folder / "odd.txt").write_text("the quixotic lighthouse keeper")
    _sync(folder, out)
    assert load_index(out).mentions("quixotic")
    (folder / "odd.txt").unlink()
    assert _sync(folder, out).segment
    index = load_index(out)
    assert not index.mentions("quixotic")
    assert index.retrieve("quixotic lighthouse", 5, "bm25") == []


def test_too_many_segments_fold_the_newest_and_too_large_a_change_is_written_whole(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "ix"
    _sync(folder, out)
    monkeypatch.setattr(segment_sync, "MAX_SEGMENTS", 2)
    rng = random.Random(5)
    (folder / "f01.txt").write_text(_text(rng, 2))
    assert _sync(folder, out).segment == "segments/0001"
    (folder / "f05.txt").write_text(_text(rng, 2))
    report = _sync(folder, out)  # a third segment is past the limit: the newest folded
    assert report.segment == "segments/0002"
    listed = load_index(out).manifest.segments
    assert [s.folder for s in listed] == ["", "segments/0002"]
    assert set(listed[1].dropped) == {"f01.txt", "f05.txt"}  # both still end the base's
    _same_as_fresh(folder, out, tmp_path, queries=20)
    for n in range(0, 30, 2):  # half the folder changed: written whole
        path = next(folder.rglob(f"f{n:02d}.txt"))
        path.write_text(_text(rng, 3))
    report = _sync(folder, out)
    assert report.rewritten and not report.segment
    _same_as_fresh(folder, out, tmp_path, queries=20)


def test_folds_keep_every_live_passage_once_over_many_edits(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Edits, deletions, new files and a file edited twice, over more syncs than the limit:
    each sync a segment or a fold (never a whole write), rankings always a fresh index's; the
    folders a sync folds stay for readers of the last set until the next write removes them."""
    out = tmp_path / "ix"
    _sync(folder, out)
    monkeypatch.setattr(segment_sync, "MAX_SEGMENTS", 3)
    monkeypatch.setattr(segment_sync, "MERGE_SHARE", 10.0)  # never written whole here
    rng = random.Random(9)
    edits = ["f01", "f07", "f01", "-f09", "+n1", "f03", "-f07", "+n2", "n1", "f11", "f13"]
    listed: set[str] = set()
    for step, edit in enumerate(edits):
        path = folder / f"{edit.strip('+-')}.txt"
        if edit.startswith("-"):
            path.unlink()
        else:
            path.write_text(_text(rng, rng.randint(1, 4)) + f" pilot{step}")
        report = _sync(folder, out)
        assert report.segment, edit
        before, listed = listed, {s.folder for s in load_index(out).manifest.segments[1:]}
        assert len(listed) <= 2
        on_disk = {f"segments/{d.name}" for d in (out / "segments").iterdir()}
        assert on_disk == listed | (before - listed), edit  # just folded: kept one sync
        _same_as_fresh(folder, out, tmp_path, queries=15)
    assert load_index(out).retrieve("pilot8", 1, "bm25")[0].doc_id == "n1.txt"
    assert not load_index(out).retrieve("pilot0", 1, "bm25")  # f01 edited again since


def test_a_fold_leaves_a_larger_older_segment_as_it_is(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Segments of like size are folded: a large segment (many files changed) is not written
    again by the small edits after it."""
    out = tmp_path / "ix"
    _sync(folder, out)
    monkeypatch.setattr(segment_sync, "MAX_SEGMENTS", 3)
    monkeypatch.setattr(segment_sync, "MERGE_SHARE", 10.0)
    rng = random.Random(4)
    for n in (1, 3, 5, 6, 7, 9, 10, 11):
        (folder / f"f{n:02d}.txt").write_text(_text(rng, 20))
    large = _sync(folder, out).segment
    for step in range(4):
        (folder / "f13.txt").write_text(_text(rng, 1) + f" tide{step}")
        _sync(folder, out)
        listed = [s.folder for s in load_index(out).manifest.segments]
        assert listed[:2] == ["", large] and len(listed) <= 3, step
    _same_as_fresh(folder, out, tmp_path, queries=20)


def test_a_kill_before_the_manifest_keeps_the_last_set(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "ix"
    _sync(folder, out)
    before = [(p.id, p.score) for p in load_index(out).retrieve("harbour w1 w2", 10, "bm25")]
    (folder / "f01.txt").write_text("harbour harbour harbour w1 w2")

    monkeypatch.setattr(segment_sync, "write_manifest", _killed)
    with pytest.raises(KeyboardInterrupt):
        _sync(folder, out)
    assert (out / "segments" / "0001").is_dir()  # written, never listed
    index = load_index(out)  # the folder no manifest lists is not part of the index
    assert [(p.id, p.score) for p in index.retrieve("harbour w1 w2", 10, "bm25")] == before
    monkeypatch.undo()
    report = _sync(folder, out)
    assert report.changes["changed"] == ["f01.txt"] and report.segment == "segments/0001"
    _same_as_fresh(folder, out, tmp_path, queries=20)


def test_a_kill_during_a_fold_keeps_the_segments_it_was_folding(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "ix"
    _sync(folder, out)
    monkeypatch.setattr(segment_sync, "MAX_SEGMENTS", 2)
    (folder / "f01.txt").write_text("harbour harbour w1")
    assert _sync(folder, out).segment == "segments/0001"
    before = [(p.id, p.score) for p in load_index(out).retrieve("harbour w1 w2", 10, "bm25")]
    (folder / "f05.txt").write_text("harbour w2")

    with monkeypatch.context() as m:
        m.setattr(segment_sync, "write_manifest", _killed)
        with pytest.raises(KeyboardInterrupt):
            _sync(folder, out)  # the fold written, never listed
    index = load_index(out)
    assert [s.folder for s in index.manifest.segments] == ["", "segments/0001"]
    assert [(p.id, p.score) for p in index.retrieve("harbour w1 w2", 10, "bm25")] == before
    report = _sync(folder, out)
    assert report.changes["changed"] == ["f05.txt"] and report.segment == "segments/0002"
    _same_as_fresh(folder, out, tmp_path, queries=20)


def test_a_kill_after_the_manifest_reads_the_file_again(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "ix"
    _sync(folder, out)
    (folder / "f01.txt").write_text("harbour harbour harbour w1 w2")

    monkeypatch.setattr(segment_sync, "update_sources", _killed)
    with pytest.raises(KeyboardInterrupt):
        _sync(folder, out)
    _same_as_fresh(folder, out, tmp_path, queries=20)  # the segment is live
    monkeypatch.undo()
    report = _sync(folder, out)  # the state still says the old file: read again
    assert report.changes["changed"] == ["f01.txt"] and report.segment == "segments/0002"
    _same_as_fresh(folder, out, tmp_path, queries=20)
    assert not _sync(folder, out).rewritten


def test_a_damaged_segment_is_caught_and_the_sync_writes_it_whole(
    folder: Path, tmp_path: Path
) -> None:
    out = tmp_path / "ix"
    _sync(folder, out)
    (folder / "f01.txt").write_text("harbour master w1")
    _sync(folder, out)
    path = out / "segments" / "0001" / "passages.jsonl"
    data = bytearray(path.read_bytes())
    data[20] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(IndexUnusable, match="changed since the build"):
        load_index(out)
    report = _sync(folder, out)
    assert report.rewritten and not report.segment
    _same_as_fresh(folder, out, tmp_path, queries=10)


def test_a_manifest_with_a_bad_segment_is_refused(folder: Path, tmp_path: Path) -> None:
    from ragteam.retrieval.manifest import seal

    out = tmp_path / "ix"
    _sync(folder, out)
    (folder / "f01.txt").write_text("harbour master w1")
    _sync(folder, out)
    raw = json.loads((out / "manifest.json").read_text())
    raw["segments"][1]["folder"] = "../elsewhere"
    (out / "manifest.json").write_text(json.dumps(seal(raw)))
    with pytest.raises(IndexUnusable, match="segments"):
        load_index(out)


def test_a_collection_row_may_not_take_a_live_id(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    docs = tmp_path / "docs"
    docs.mkdir()
    rows = [{"id": f"r{n}", "title": "", "text": f"row {n} about w{n} harbour"} for n in range(10)]
    (docs / "a.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    many = [{"id": f"s{n}", "title": "", "text": f"row {n} of w{n % 50} tide"} for n in range(300)]
    (docs / "many.jsonl").write_text("\n".join(json.dumps(r) for r in many))
    (docs / "b.jsonl").write_text(json.dumps({"id": "b1", "title": "", "text": "tide"}))
    out = tmp_path / "ix"
    _sync(docs, out)
    (docs / "b.jsonl").write_text(json.dumps({"id": "b2", "title": "", "text": "pilot tide"}))
    assert _sync(docs, out).segment  # a new id: a segment
    rows[4]["text"] = "row 4 now speaks of the pilot"
    (docs / "a.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    report = _sync(docs, out)  # its own ids again, one text changed
    assert report.segment == "segments/0002"
    assert "pilot" in load_index(out).passage("r4").text
    (docs / "b.jsonl").write_text(json.dumps({"id": "r3", "title": "", "text": "pilot"}))
    with pytest.raises(InputError, match="'r3'"):  # taken: the whole write names the clash
        _sync(docs, out)
    assert load_index(out).passage("b2") is not None  # the last set still serves


def test_index_info_lists_the_segments(folder: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from ragteam.cli import app

    out = tmp_path / "ix"
    _sync(folder, out)
    (folder / "f01.txt").unlink()
    _sync(folder, out)
    result = CliRunner().invoke(app, ["index", "info", str(out)])
    assert result.exit_code == 0, result.output
    assert "segment segments/0001: 0 of 0 passages live; dropped 1 files" in result.output
    assert "segment (whole):" in result.output
    assert segments.FOLDER == "segments"
    result = CliRunner().invoke(app, ["index", "sync", str(folder), "--out", str(out), "--merge"])
    assert result.exit_code == 0, result.output
    assert not load_index(out).manifest.segments


def test_a_hybrid_index_takes_segments_and_embeds_only_the_change(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hybrid = IndexSettings(retriever="hybrid")
    out, fresh = tmp_path / "ix", tmp_path / "fresh-hybrid"
    sync_folder(folder, out, index=hybrid)
    (folder / "f01.txt").write_text("The harbour master keeps the tide tables.")
    (folder / "f02.txt").unlink()
    report = sync_folder(folder, out, index=hybrid)
    assert report.segment == "segments/0001" and report.embedded == 1  # the one new passage
    _same_rankings(folder, out, fresh, hybrid)
    monkeypatch.setattr(segment_sync, "MAX_SEGMENTS", 2)
    (folder / "f03.txt").write_text("A pilot boards every ship at the outer buoy.")
    report = sync_folder(folder, out, index=hybrid)  # the newest folded in: f01's vector cached
    assert report.segment == "segments/0002" and report.embedded == 1
    assert len(load_index(out).manifest.segments) == 2
    _same_rankings(folder, out, fresh, hybrid)
    assert load_index(out).retrieve("who boards ships", 1, "dense")[0].id == "f03.txt"


def _same_rankings(folder: Path, out: Path, fresh: Path, hybrid: IndexSettings) -> None:
    """Dense, BM25 and fused rankings (ids and scores) those of an index written fresh."""
    shutil.rmtree(fresh, ignore_errors=True)
    sync_folder(folder, fresh, index=hybrid, fresh=True)
    a, b = load_index(out), load_index(fresh)
    assert len(a.passages) == len(b.passages)
    rng = random.Random(5)
    queries = ["who keeps the tide tables", *(" ".join(rng.sample(WORDS, 3)) for _ in range(15))]
    for query in queries:
        for method in ("dense", "bm25", "hybrid"):
            got = [(p.id, p.score) for p in a.retrieve(query, 8, method)]
            assert got == [(p.id, p.score) for p in b.retrieve(query, 8, method)], (query, method)
    assert a.retrieve("who keeps the tide tables", 1, "dense")[0].id == "f01.txt"
