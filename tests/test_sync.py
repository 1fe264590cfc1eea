"""An index that follows its folder, on real files: nothing skipped silently, locators on
every passage, and a sync that changes exactly what changed on disk (touch, edit, rename,
delete, a failing file retried), with embeddings re-used; kills, locks and bad input."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from docfiles import PDF_PAGES, make_folder, make_pdf

from ragteam.errors import InputError
from ragteam.retrieval import load_index, sync_folder
from ragteam.retrieval.index import IndexSettings
from ragteam.retrieval.sources import read_sources

BM25 = IndexSettings(retriever="bm25")


def sync(src, out, **kw):
    return sync_folder(src, out, index=kw.pop("index", BM25), **kw)


@pytest.fixture
def folder(tmp_path):
    return make_folder(tmp_path / "docs")


def test_every_file_is_read_or_reported(folder, tmp_path):
    report = sync(folder, tmp_path / "ix")
    status = {s.path: (s.status, s.reason) for s in report.files}
    assert {p for p, (st, _) in status.items() if st == "read"} == {
        "report.pdf",
        "spec.docx",
        "deck.pptx",
        "ferry.html",
        "notes.md",
        "MEETING.TXT",
        "guide.rst",
    }
    assert status["photo.heic"][0] == "skipped" and ".heic" in status["photo.heic"][1]
    sources, _settings = read_sources(tmp_path / "ix")
    assert sources["photo.heic"].status == "skipped"  # recorded for `index info` too


def test_sources_read_their_pieces_from_the_file_they_were_read_from(folder, tmp_path):
    """Sources hold no text: their pieces are read when asked for, from the sources file as it
    was when they were read (a sync that replaces it meanwhile changes nothing they read); a
    row gone from under them is a clear error saying what to do."""
    import sqlite3

    from ragteam.errors import IndexUnusable

    sync(folder, tmp_path / "ix")
    sources, _settings = read_sources(tmp_path / "ix")
    before = sources["notes.md"].piece_list()
    assert before and sources["notes.md"].pieces == []  # read on use, not kept
    (folder / "notes.md").write_text("# Other\n\nNothing about valves any more.\n")
    sync(folder, tmp_path / "ix")  # a new sources file swapped in
    assert sources["notes.md"].piece_list() == before
    fresh, _ = read_sources(tmp_path / "ix")
    assert "valves any more" in fresh["notes.md"].piece_list()[0]["text"]
    with sqlite3.connect(tmp_path / "ix" / "sources.sqlite") as db:
        db.execute("DELETE FROM sources WHERE path = 'notes.md'")
    with pytest.raises(IndexUnusable, match="sync the index again"):
        fresh["notes.md"].piece_list()


def test_passages_carry_locators_and_retrieval_finds_pages(folder, tmp_path):
    sync(folder, tmp_path / "ix")
    index = load_index(tmp_path / "ix")
    hit = index.retrieve("harbour master appointed", k=1)[0]
    assert hit.locator.describe() == 'report.pdf p. 3 ("1") § 3 Staff'
    slide = index.retrieve("engineers join in May", k=1)[0]
    assert slide.locator.slide == 2 and slide.locator.describe() == "deck.pptx slide 2 § Team"
    section = index.retrieve("oil the valve lanolin", k=1)[0]
    assert section.locator.section == ("Maintenance",) and section.locator.page == 2
    for passage in index.passages:  # no Markdown syntax reaches what the model reads
        assert "**" not in passage.text and "## " not in passage.text


def test_sync_changes_exactly_what_changed(folder, tmp_path):
    out = tmp_path / "ix"
    sync(folder, out)
    before = {p.id: p.text for p in load_index(out).passages}
    again = sync(folder, out)
    assert not again.rewritten and len(again.changes["unchanged"]) == 7
    os.utime(folder / "notes.md", ns=(1, 1))  # mtime only
    touched = sync(folder, out)
    assert touched.changes["touched"] == ["notes.md"] and not touched.rewritten
    assert touched.converted == 0
    (folder / "MEETING.TXT").write_text("The board postponed the lighthouse repair.")
    (folder / "spec.docx").rename(folder / "pump.docx")
    (folder / "guide.rst").unlink()
    changed = sync(folder, out)
    assert changed.changes["changed"] == ["MEETING.TXT"]
    assert changed.changes["renamed"] == ["spec.docx -> pump.docx"]
    assert changed.changes["deleted"] == ["guide.rst"] and changed.converted == 1
    index = load_index(out)
    ids = {p.id for p in index.passages}
    assert not any(i.startswith(("guide.rst", "spec.docx")) for i in ids)
    assert any(i.startswith("pump.docx") for i in ids)
    assert index.retrieve("lighthouse repair", k=1)[0].text.startswith("The board postponed")
    assert not any("guide" in p.doc_id for p in index.retrieve("installer twice", k=20))
    kept = {k: v for k, v in before.items() if k.startswith(("report", "deck", "ferry"))}
    assert {p.id: p.text for p in index.passages if p.id in kept} == kept


@pytest.mark.integration
def test_an_edited_page_re_embeds_only_its_passages(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # counts from a cold cache
    folder = tmp_path / "docs"
    folder.mkdir()
    make_pdf(folder / "report.pdf")
    (folder / "other.md").write_text("# Other\n\nThe lighthouse keeper is Ada Brenn.")
    out = tmp_path / "ix"
    first = sync_folder(folder, out)  # hybrid: dense through the embedding cache
    assert first.embedded == len(load_index(out).passages)
    pages = list(PDF_PAGES)
    pages[1] = ("Budget", "The budget for the new harbour is six million crowns.")
    make_pdf(folder / "report.pdf", pages)
    edited = sync_folder(folder, out)
    assert edited.changes["changed"] == ["report.pdf"] and edited.embedded == 1
    (folder / "other.md").rename(folder / "renamed.md")
    renamed = sync_folder(folder, out)
    assert renamed.changes["renamed"] == ["other.md -> renamed.md"] and renamed.embedded == 0
    hit = load_index(out).retrieve("harbour budget crowns", k=1)[0]
    assert "six million" in hit.text and hit.locator.page == 2


class LostMidway:
    """A `BatchedEncode` (the shape of `ragteam.scale.ray_index.RayEncode`) whose cluster is
    lost after `keep` batches of 2: it encodes locally, as an actor would, until then."""

    def __init__(self, keep: int) -> None:
        self.keep, self.asked = keep, []

    def __call__(self, texts, spec, progress):
        raise AssertionError("a sync must take a batched encode's vectors batch by batch")

    def batches(self, texts, spec):
        from ragteam.retrieval.encoder_registry import make_encoder
        from ragteam.scale.cluster import ClusterLost

        self.asked.append(len(texts))
        encoder = make_encoder(spec)
        for n, start in enumerate(range(0, len(texts), 2)):
            if n == self.keep:
                raise ClusterLost("the Ray cluster at 127.0.0.1:6379 failed while embedding")
            rows = list(range(start, min(start + 2, len(texts))))
            yield rows, encoder.encode([texts[r] for r in rows])


def test_a_cluster_lost_midway_keeps_the_index_and_what_came_back(tmp_path, monkeypatch):
    """Issue 70: the sync hands a cluster every text at once (its actors share them) and
    stores each batch as it comes back; when the cluster dies the sync fails, the index is
    as it was, and the next sync embeds only what never came back."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # counts from a cold cache
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nThe lighthouse keeper is Ada Brenn.")
    out = tmp_path / "ix"
    sync_folder(folder, out)
    before = (out / "manifest.json").read_bytes()
    for i in range(4):
        (folder / f"n{i}.md").write_text(f"# N{i}\n\nThe ferry number {i} sails at {i + 6}.")
    from ragteam.scale.cluster import ClusterLost

    lost = LostMidway(keep=1)
    with pytest.raises(ClusterLost):
        sync_folder(folder, out, encode=lost)
    assert lost.asked == [4] and (out / "manifest.json").read_bytes() == before
    again = sync_folder(folder, out)
    assert again.embedded == 2  # the first batch of 2 was kept
    assert len(load_index(out).passages) == 5


def test_a_failing_file_is_reported_and_retried(folder, tmp_path):
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 truncated")
    (folder / "empty.md").write_bytes(b"")
    report = sync(folder, tmp_path / "ix")
    failed = {s.path: s.reason for s in report.files if s.status == "failed"}
    assert set(failed) == {"broken.pdf", "empty.md"} and "empty" in failed["empty.md"]
    make_pdf(folder / "broken.pdf", [("Fixed", "The repaired file names the pilot Ines Varo.")])
    fixed = sync(folder, tmp_path / "ix")
    assert fixed.changes["new"] == ["broken.pdf"]
    assert "Ines Varo" in load_index(tmp_path / "ix").retrieve("pilot", k=1)[0].text


def test_a_folder_where_every_file_fails_is_an_error_naming_each(tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "a.pdf").write_bytes(b"not a pdf")
    (folder / "b.docx").write_bytes(b"not a zip")
    with pytest.raises(InputError, match=r"a\.pdf: failed.*b\.docx: failed .not a Word"):
        sync(folder, tmp_path / "ix")
    assert not (tmp_path / "ix").exists()


def test_links_hidden_files_unicode_names_and_an_index_inside(folder, tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("The vault code is 4711.")
    (folder / "link.txt").symlink_to(outside)
    (folder / "dangling.txt").symlink_to(tmp_path / "gone.txt")
    (folder / ".DS_Store").write_bytes(b"\0\0")
    (folder / "Café Ünïcødé 日本.md").write_text("# Menu\n\nThe soup of the day is sorrel.")
    report = sync(folder, tmp_path / "ix")
    status = {s.path: (s.status, s.reason) for s in report.files}
    assert status["link.txt"][0] == "skipped" and "not followed" in status["link.txt"][1]
    assert "dangling" in status["dangling.txt"][1]
    assert status[".DS_Store"][0] == "skipped"
    assert status["Café Ünïcødé 日本.md"][0] == "read"
    assert all("4711" not in p.text for p in load_index(tmp_path / "ix").passages)
    (tmp_path / "ix" / ".DS_Store").write_bytes(b"\0")  # a file manager opened the index
    (tmp_path / "ix" / "notes.txt").write_text("what this index is for")  # N9: someone's notes
    (tmp_path / "ix" / "old").mkdir()
    (tmp_path / "ix" / "old" / "copy.jsonl").write_text("{}")
    load_index(tmp_path / "ix")  # foreign files are not the index's: ignored
    with pytest.raises(InputError, match="inside the folder"):
        sync(folder, folder / "ix")


def test_a_second_sync_at_once_is_refused(folder, tmp_path, monkeypatch):
    import ragteam.retrieval.index as index_module
    from ragteam.errors import IndexBusy
    from ragteam.retrieval import build_index

    monkeypatch.setattr(index_module, "WRITER_WAIT_S", 0.2)
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "a", "text": "alpha"}\n')
    with index_module.one_writer(tmp_path / "ix"):
        with pytest.raises(IndexBusy, match="another sync or build"):
            sync(folder, tmp_path / "ix")
        with pytest.raises(IndexBusy):  # a JSONL build is a writer too
            build_index(corpus, tmp_path / "ix", retriever="bm25")
    sync(folder, tmp_path / "ix")  # released: the next one goes through


def test_an_interrupted_sync_keeps_the_old_index_and_the_next_completes(
    folder, tmp_path, monkeypatch
):
    import ragteam.retrieval.sync as sync_module

    out = tmp_path / "ix"
    sync(folder, out)
    (folder / "MEETING.TXT").write_text("The board cancelled the lighthouse repair.")

    def interrupted(path, sources, settings):
        raise KeyboardInterrupt

    real = sync_module.write_sources
    monkeypatch.setattr(sync_module, "write_sources", interrupted)
    with pytest.raises(KeyboardInterrupt):  # a whole write (a change alone is a segment)
        sync(folder, out, merge=True)
    monkeypatch.setattr(sync_module, "write_sources", real)
    assert "approved" in load_index(out).retrieve("lighthouse repair", k=1)[0].text
    done = sync(folder, out)
    assert done.changes["changed"] == ["MEETING.TXT"] and done.converted == 0  # from the cache
    assert "cancelled" in load_index(out).retrieve("lighthouse repair", k=1)[0].text


KILLED_SYNC = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from ragteam.retrieval import sync_folder
    from ragteam.retrieval.index import IndexSettings

    def progress(phase, done, total):
        if phase == "bm25":  # the new index is being written into its staging folder
            Path(sys.argv[3]).write_text("writing")
            time.sleep(60)

    sync_folder(sys.argv[1], sys.argv[2], index=IndexSettings(retriever="bm25"),
                progress=progress, merge=True)
    """
)


def test_a_sync_killed_while_writing_loses_nothing_and_the_next_completes(folder, tmp_path):
    out = tmp_path / "ix"
    sync(folder, out)
    (folder / "MEETING.TXT").write_text("The board cancelled the lighthouse repair.")
    marker = tmp_path / "writing"
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_SYNC, str(folder), str(out), str(marker)]
    )
    deadline = time.time() + 120
    while not marker.exists() and time.time() < deadline and child.poll() is None:
        time.sleep(0.1)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert marker.exists() and list(tmp_path.glob(".ix.building-*"))  # killed mid-write
    index = load_index(out)  # the previous generation, whole
    assert "approved" in index.retrieve("lighthouse repair", k=1)[0].text
    report = sync(folder, out)  # the lock died with its process; the conversion was cached
    assert report.changes["changed"] == ["MEETING.TXT"] and report.converted == 0
    assert "cancelled" in load_index(out).retrieve("lighthouse repair", k=1)[0].text
    assert not list(tmp_path.glob(".ix.building-*"))  # the dead writer's staging is gone


def test_cli_sync_and_info_list_every_file(folder, tmp_path):
    from typer.testing import CliRunner

    from ragteam.cli import app

    runner = CliRunner()
    out = tmp_path / "ix"
    result = runner.invoke(
        app, ["index", "sync", str(folder), "--out", str(out), "--retriever", "bm25"]
    )
    assert result.exit_code == 0, result.output
    assert "new      report.pdf" in result.output and "skipped  photo.heic" in result.output
    (folder / "late.md").write_text("# Late\n\nA file added after the sync.")
    info = runner.invoke(app, ["index", "info", str(out)])
    assert info.exit_code == 0, info.output
    assert "1 skipped" in info.output and "1 files changed since the last sync" in info.output
    assert re.search(r"read +report\.pdf: \d+ pages, \d+ passages", info.output)  # every file
    assert re.search(r"read +deck\.pptx: \d+ slides, \d+ passages", info.output)
    assert "loads" in info.output  # a folder that moved on does not make the index unusable
    import json

    hits = runner.invoke(app, ["search", "harbour master", "--index", str(out), "--json"])
    assert hits.exit_code == 0, hits.output
    top = json.loads(hits.output)[0]
    where = top["locator"]
    assert (where["source"], where["page"], where["page_label"]) == ("report.pdf", 3, "1")
    assert where["section"] == ["3 Staff"] and where["slide"] is None and top["text"]
    assert where["text"] == 'report.pdf p. 3 ("1") § 3 Staff'
    formats = runner.invoke(app, ["index", "formats"])
    assert ".pdf" in formats.output and ".pptx" in formats.output


class Rewriting:
    """A converter that finds its file changed under it (an editor saving mid-read)."""

    name, version, suffixes = "rewriting", "1", (".mut",)

    def convert(self, path, settings):
        from ragteam.documents import Converted, Unit

        text = path.read_text()
        path.write_text(text + " and more")
        os.utime(path, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
        return Converted("", [Unit(text)])


def test_a_file_changed_while_it_is_read_is_read_again_next_time(folder, tmp_path, monkeypatch):
    from ragteam.documents import CONVERTERS

    CONVERTERS.register("rewriting", f"{__name__}:Rewriting")
    try:
        (folder / "draft.mut").write_text("The draft names the keeper Ada Brenn")
        first = sync(folder, tmp_path / "ix")
        status = {s.path: (s.status, s.reason) for s in first.files}
        # what was read may not be the bytes hashed: neither trusted nor cached
        assert status["draft.mut"] == (
            "failed",
            "changed while it was read; the next sync reads it again",
        )
        again = sync(folder, tmp_path / "ix")
        again_status = {s.path: s.status for s in again.files}
        assert again_status["draft.mut"] == "failed"  # read again (and changed again)
        assert "draft.mut" not in again.changes["unchanged"]
    finally:
        CONVERTERS._builtins.pop("rewriting")
        CONVERTERS._loaded.clear()


def test_a_huge_web_page_is_read_whole_with_a_note(folder, tmp_path, monkeypatch):
    import ragteam.documents.web as web

    monkeypatch.setattr(web, "MAX_MAIN_BYTES", 200_000)
    monkeypatch.setattr(web.HtmlConverter, "isolated", False)  # the patch is in this process
    rows = "".join(f"<p>Row {n}: the tide table entry for day {n}.</p>" for n in range(8000))
    (folder / "big.html").write_text(f"<html><body><h1>Tides</h1>{rows}</body></html>")
    report = sync(folder, tmp_path / "ix")
    big = next(s for s in report.files if s.path == "big.html")
    assert big.status == "read" and "read whole" in big.notes[0]
    assert load_index(tmp_path / "ix").retrieve("tide table entry for day 7777", k=1)[0].doc_id == (
        "big.html"
    )


def test_rewording_citations_keeps_indexes_loadable_and_old_checksums_load(tmp_path, monkeypatch):
    """The manifest's checksum covers where each passage stands, not how a citation words it:
    a release that rewords `Locator.describe` loads an index built before it. An index built
    when the checksum covered the wording (before this change) still loads. (A load checks the
    passages' bytes against the digest the sealed manifest lists, not their checksum again:
    `test_index.py::test_changed_files_and_old_format`.)"""
    import json

    from ragteam.retrieval.corpus import passages_checksum
    from ragteam.retrieval.manifest import seal
    from ragteam.types import Locator

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Tides\n\nThe tide gauge stands on pier four.\n")
    out = tmp_path / "ix"
    sync_folder(docs, out, index=IndexSettings(retriever="bm25"))
    passages = load_index(out).passages
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    monkeypatch.setattr(Locator, "describe", lambda self: f"{self.source}, somewhere")
    assert passages_checksum(passages) == manifest["corpus_checksum"]
    assert load_index(out).passages[0].locator.describe() == "guide.md, somewhere"
    monkeypatch.undo()
    older = passages_checksum(passages, worded=True)
    assert older != manifest["corpus_checksum"]
    (out / "manifest.json").write_text(json.dumps(seal({**manifest, "corpus_checksum": older})))
    assert [p.id for p in load_index(out).passages] == [p.id for p in passages]
    (out / "manifest.json").write_text(json.dumps(seal({**manifest, "passage_count": 2})))
    with pytest.raises(Exception, match="do not match its manifest"):
        load_index(out)


def test_a_new_converter_version_reads_its_files_again_at_the_next_sync(
    folder, tmp_path, monkeypatch
):
    """An upgrade that converts a format better reaches indexes built before it: a file read
    by an older version of its converter is converted again (and only those files)."""
    from ragteam.documents.text import MarkdownConverter

    out = tmp_path / "ix"
    sync(folder, out)
    monkeypatch.setattr(MarkdownConverter, "version", MarkdownConverter.version + "-next")
    again = sync(folder, out)
    assert again.changes["changed"] == ["notes.md"] and again.converted == 1
    assert len(again.changes["unchanged"]) == 6
    settled = sync(folder, out)
    assert settled.converted == 0 and not settled.changes["changed"]


def test_a_locator_s_fields_are_every_field_as_asdict_gives_them():
    """`Locator.fields` is written out (asdict deep-copies, twice a passage at write): it must
    still hold every field, in order, so a field added later is not left out of checksums."""
    from dataclasses import asdict

    from ragteam.locator import Locator

    for loc in (
        Locator("a.pdf", page=3, page_label="iii", section=("A", "B"), start=4, end=9),
        Locator("c.jsonl", record="hp1", slide=2),
    ):
        expected = {**asdict(loc), "section": list(loc.section)}
        if not loc.record:
            del expected["record"]
        assert list(loc.fields().items()) == list(expected.items())


def test_bm25_tokenizes_only_the_changed_file_and_ranks_as_a_clean_build(folder, tmp_path):
    """A sync takes the BM25 terms of unchanged text from the index it replaces: only the
    changed file's passages are tokenized, and the index ranks as one built afresh. A damaged
    index lends nothing (every passage is tokenized again)."""
    out, clean = tmp_path / "ix", tmp_path / "clean"
    first = sync(folder, out)
    total = first.manifest["passage_count"]
    assert first.tokenized == total
    (folder / "MEETING.TXT").write_text("The board postponed the lighthouse repair to May.")
    changed = sync(folder, out)
    meeting = [p for p in load_index(out).passages if p.locator.source == "MEETING.TXT"]
    assert changed.tokenized == len(meeting) == 1
    sync(folder, clean)
    ours, theirs = load_index(out), load_index(clean)
    for query in ("lighthouse repair", "ferry timetable", "pump pressure", "installer twice"):
        got, want = ours.retrieve(query, k=5), theirs.retrieve(query, k=5)
        assert [h.id for h in got] == [h.id for h in want], query
    spool = out / "bm25" / "terms.spool.i32"
    raw = bytearray(spool.read_bytes())
    raw[:4] = b"\xff\xff\xff\x7f"
    spool.write_bytes(bytes(raw))
    (folder / "MEETING.TXT").write_text("The board postponed the lighthouse repair to June.")
    assert sync(folder, out).tokenized == total
