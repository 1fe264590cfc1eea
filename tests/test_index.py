"""Indexes are real files on disk; loading verifies them and says how to rebuild."""

import json
import shutil

import pytest

from ragteam.errors import IndexUnusable, InputError
from ragteam.retrieval import build_index, load_index, read_manifest
from ragteam.retrieval.index import FORMAT_VERSION
from ragteam.retrieval.manifest import seal


def test_bm25_index_finds_the_right_passage(bm25_index_dir):
    index = load_index(bm25_index_dir)
    manifest = index.manifest
    assert manifest.format_version == FORMAT_VERSION
    assert manifest.passage_count == len(index.passages) == 48
    assert manifest.retriever == "bm25" and manifest.embedding_model is None
    top = index.retrieve("Who built the Wrenhold Lighthouse?", k=3)
    assert top[0].title == "Wrenhold Lighthouse"
    assert top[0].score >= top[1].score >= top[2].score
    assert index.retrieve("Who built the Wrenhold Lighthouse?", k=3) is top  # cached


def test_missing_index_directory(tmp_path):
    with pytest.raises(IndexUnusable, match="ragteam index build"):
        load_index(tmp_path / "nothing-here")


def test_corrupt_manifest(bm25_index_dir, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(bm25_index_dir, copy)
    (copy / "manifest.json").write_text("{not json")
    with pytest.raises(IndexUnusable, match="corrupt.*rebuild"):
        load_index(copy)
    (copy / "manifest.json").unlink()
    with pytest.raises(IndexUnusable, match="no manifest"):
        load_index(copy)


def test_changed_files_and_old_format(bm25_index_dir, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(bm25_index_dir, copy)
    with (copy / "passages.jsonl").open("a") as handle:
        handle.write('{"id": "x", "title": "", "text": "extra", "doc_id": "x"}\n')
    with pytest.raises(IndexUnusable, match="changed since the build"):
        load_index(copy)
    shutil.rmtree(copy)
    shutil.copytree(bm25_index_dir, copy)
    manifest = read_manifest(copy).raw
    manifest["format_version"] = 0
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexUnusable, match="format 0"):
        load_index(copy)


def test_stale_source_is_detected(tmp_path):
    src = tmp_path / "c.jsonl"
    src.write_text('{"id": "a", "title": "A", "text": "alpha beta"}\n')
    build_index(src, tmp_path / "idx", retriever="bm25")
    load_index(tmp_path / "idx")
    src.write_text('{"id": "a", "title": "A", "text": "alpha gamma"}\n')
    with pytest.raises(IndexUnusable, match="changed after the index"):
        load_index(tmp_path / "idx")
    assert load_index(tmp_path / "idx", check_source=False).passages[0].text == "alpha beta"


def test_rebuild_replaces_whole_and_failed_build_keeps_old(tmp_path):
    src = tmp_path / "c.jsonl"
    src.write_text('{"id": "a", "title": "A", "text": "alpha"}\n')
    out = tmp_path / "idx"
    build_index(src, out, retriever="bm25")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "ok"}\nnot json\n')
    with pytest.raises(InputError):
        build_index(bad, out, retriever="bm25")
    assert load_index(out).passages[0].text == "alpha"
    src.write_text('{"id": "a", "title": "A", "text": "alpha"}\n{"id": "b", "text": "beta"}\n')
    build_index(src, out, retriever="bm25")
    assert len(load_index(out).passages) == 2
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".idx")]
    assert leftovers == [".idx.lock"]  # the writers' lock stays; no staging or old copy does


def test_refuses_to_overwrite_a_folder_that_is_not_an_index(tmp_path):
    src = tmp_path / "c.jsonl"
    src.write_text('{"id": "a", "title": "A", "text": "alpha"}\n')
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    with pytest.raises(InputError, match="not an index"):
        build_index(src, precious, retriever="bm25")
    assert (precious / "notes.txt").read_text() == "keep me"


@pytest.mark.integration
def test_hybrid_index_with_real_embeddings(hybrid_index_dir):
    index = load_index(hybrid_index_dir)
    assert index.manifest.embedding_model.startswith("sentence-transformers/all-MiniLM-L6-v2")
    assert (hybrid_index_dir / "dense.faiss").is_file()
    question = "Which engineer designed the bridge between Quillan and Tarrin?"
    for method in ("bm25", "dense", "hybrid"):
        titles = [p.title for p in index.retrieve(question, k=5, method=method)]
        assert "Tarrin Bridge" in titles, (method, titles)


@pytest.mark.integration
def test_index_built_with_another_embedding_model(hybrid_index_dir, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(hybrid_index_dir, copy)
    manifest = read_manifest(copy).raw
    manifest["embedding_model"] = "intfloat/e5-small@0000"
    (copy / "manifest.json").write_text(json.dumps(seal(manifest)))  # as another build seals
    with pytest.raises(IndexUnusable, match="e5-small.*rebuild it with"):
        load_index(copy)


def test_bm25_stemmer_is_an_index_setting(tmp_path):
    src = tmp_path / "c.jsonl"
    src.write_text(
        '{"id": "a", "title": "", "text": "the keepers of lighthouses"}\n'
        '{"id": "b", "title": "", "text": "a keeper of a lighthouse"}\n'
    )
    build_index(src, tmp_path / "stem", retriever="bm25")
    build_index(src, tmp_path / "plain", retriever="bm25", bm25_stemmer="none")
    plain = load_index(tmp_path / "plain")
    assert plain.manifest.records["bm25"]["stemmer"] == "none"
    assert [p.id for p in plain.retrieve("lighthouses", 2)] == ["a"]
    assert {p.id for p in load_index(tmp_path / "stem").retrieve("lighthouses", 2)} == {"a", "b"}
    with pytest.raises(InputError, match="unknown stemmer 'klingon'"):
        build_index(src, tmp_path / "x", retriever="bm25", bm25_stemmer="klingon")


def test_an_index_is_hashed_once_per_process_not_on_every_load(tmp_path, monkeypatch):
    """`ragteam.answer(index=PATH)` loads the index per call: its files are verified by digest
    once, a later load of the unchanged files reads none of them whole; a changed file is
    hashed again."""
    import os
    import time

    from ragteam.commands.demo import demo_corpus_path
    from ragteam.retrieval import build_index, load_index
    from ragteam.retrieval import digests as index_module

    out = tmp_path / "idx"
    build_index(demo_corpus_path(), out, retriever="bm25")
    old = time.time() - 60
    for path in out.rglob("*"):
        os.utime(path, (old, old))  # past the 2 s window in which files are always re-hashed
    load_index(out)
    hashed: list[int] = []
    real_sha256 = index_module.hashlib.sha256

    def counting_sha256(*args):
        hashed.append(1)
        return real_sha256(*args)

    monkeypatch.setattr(index_module.hashlib, "sha256", counting_sha256)
    load_index(out)
    assert hashed == []
    victim = sorted(p for p in out.rglob("*") if p.is_file() and p.suffix != ".json")[0]
    victim.write_bytes(victim.read_bytes()[::-1])
    with pytest.raises(IndexUnusable, match="changed since the build"):
        load_index(out)


def test_passages_are_read_from_disk_when_asked_for_by_number_or_id(bm25_index_dir, tmp_path,
                                                                    monkeypatch):  # fmt: skip
    """A loaded index holds its passages' line starts and an id table, not their text: each
    passage read by number, by id or in order is the one written; the scan for line starts
    crosses its chunks and a last line without its line break."""
    from ragteam.retrieval import passage_file
    from ragteam.retrieval.passage_file import PassageFile

    index = load_index(bm25_index_dir)
    assert isinstance(index.passages, PassageFile)
    every = list(index.passages)
    assert [index.passage(p.id) for p in every] == every
    assert index.passages[-1] == every[-1] and index.passages[1:3] == every[1:3]
    assert index.passage("no such passage") is None
    lines = (bm25_index_dir / "passages.jsonl").read_bytes()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(lines.rstrip(b"\n"))
    monkeypatch.setattr(passage_file, "SCAN_BYTES", 7)  # many chunks, lines across them
    scanned = PassageFile.scanned(cut)
    assert len(scanned) == len(every) and list(scanned) == every
    assert scanned[len(every) - 1] == every[-1] and scanned.position(every[5].id) == 5
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert len(PassageFile.scanned(tmp_path / "empty.jsonl")) == 0


def test_an_id_with_quotes_and_escapes_is_found_by_its_id(tmp_path):
    from ragteam.retrieval.passage_file import PassageFile, write_passages
    from ragteam.types import Passage

    odd = [Passage('say "hi"\\n#0', "t", "one", "d"), Passage("é\t#1", "t", "two", "d")]
    write_passages(tmp_path / "p.jsonl", odd)
    read = PassageFile.scanned(tmp_path / "p.jsonl")
    assert [read.position(p.id) for p in odd] == [0, 1] and read.position("say") is None


def test_a_load_remembers_the_files_it_verified_for_the_next_start(tmp_path, monkeypatch):
    """A server's start on a built index hashed every file again (1.3 s at a million
    passages): a load remembers the versions it verified, so the next process hashes none;
    a read-only index still loads (it is hashed again each time)."""
    import os
    import stat
    import time

    from ragteam.retrieval import build_index, digests

    corpus, out = tmp_path / "c.jsonl", tmp_path / "ix"
    corpus.write_text('{"id": "a", "title": "A", "text": "The ferry leaves at nine."}\n')
    build_index(corpus, out, retriever="bm25")
    old = time.time() - 60
    for path in out.rglob("*"):
        os.utime(path, (old, old))  # past the 2 s window in which files are always re-hashed
    assert not (out / digests.KNOWN_FILE).exists()
    load_index(out)
    assert (out / digests.KNOWN_FILE).exists()
    digests.MEMO._known.clear()  # a new process
    hashed: list[str] = []
    real = digests.sha256_of
    monkeypatch.setattr(digests, "sha256_of", lambda path: hashed.append(path.name) or real(path))
    load_index(out)
    assert hashed == []
    (out / digests.KNOWN_FILE).unlink()
    out.chmod(stat.S_IRUSR | stat.S_IXUSR)  # read-only (root ignores it: then it is written)
    try:
        digests.MEMO._known.clear()
        assert load_index(out).retrieve("ferry", k=1)[0].id == "a"
        assert hashed  # nothing remembered: hashed again
    finally:
        out.chmod(stat.S_IRWXU)


def test_a_build_remembers_the_files_it_wrote_for_the_first_start(tmp_path, monkeypatch):
    """The first server start after a build hashed every index file (1.3 s at a million
    passages, §72): the build remembers the versions of what it wrote, so the first load
    hashes none of them (a file written in the last RACY_NS is hashed again: 0 here)."""
    from ragteam.retrieval import build_index, digests

    monkeypatch.setattr(digests, "RACY_NS", 0)
    corpus, out = tmp_path / "c.jsonl", tmp_path / "ix"
    corpus.write_text('{"id": "a", "title": "A", "text": "The ferry leaves at nine."}\n')
    build_index(corpus, out, retriever="bm25")
    remembered = json.loads((out / digests.KNOWN_FILE).read_text())
    assert set(remembered) == set(read_manifest(out).files)
    hashed = _hashes_counted(monkeypatch)
    assert load_index(out).retrieve("ferry", k=1)[0].id == "a"
    assert hashed == []


def _hashes_counted(monkeypatch) -> list[str]:  # noqa: ANN001
    """The names of the files hashed from now on, in a process that has hashed none yet."""
    from ragteam.retrieval import digests

    digests.MEMO._known.clear()
    hashed: list[str] = []
    real = digests.sha256_of
    monkeypatch.setattr(digests, "sha256_of", lambda path: hashed.append(path.name) or real(path))
    return hashed


def test_a_sync_remembers_the_files_it_verified_for_the_next_process(tmp_path, monkeypatch):
    """Hashing every index file took 1.3 s of each sync at a million passages. A sync writes
    the versions it verified (`.digests.json`): a later process reads none of those files
    whole while their size, mtime and inode stay; a changed file is hashed and refused."""
    import os
    import time

    from ragteam.retrieval import digests, sync_folder
    from ragteam.retrieval.index import IndexSettings, read_manifest

    docs, out = tmp_path / "docs", tmp_path / "ix"
    docs.mkdir()
    for i in range(3):
        (docs / f"n{i}.md").write_text(f"# Note {i}\n\nThe ferry leaves at {i + 1} o'clock.\n")
    sync_folder(docs, out, index=IndexSettings(retriever="bm25"))
    old = time.time() - 60
    for path in out.rglob("*"):
        os.utime(path, (old, old))  # past the 2 s window in which files are always re-hashed
    sync_folder(docs, out, index=IndexSettings(retriever="bm25"))  # nothing to re-index
    remembered = json.loads((out / digests.KNOWN_FILE).read_text())
    assert set(remembered) == set(read_manifest(out).files)
    hashed = _hashes_counted(monkeypatch)  # a new process
    load_index(out)
    assert hashed == []  # (the manifest's seal is still checked: a digest of its own text)
    victim = out / "passages.jsonl"
    victim.write_bytes(victim.read_bytes()[::-1])  # same size, a new mtime
    with pytest.raises(IndexUnusable, match="changed since the build"):
        load_index(out)
    assert hashed == ["passages.jsonl"]
