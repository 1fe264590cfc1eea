"""Issue 88 (hardening, round 5): what the hostile re-probe of 8f7c442 found."""

from __future__ import annotations

from ragteam.retrieval import load_index, sync_folder
from ragteam.retrieval.index import IndexSettings


def test_an_index_loaded_before_a_sync_reads_its_own_passages_after_it(tmp_path):
    """D-H1: an answer holding the index it loaded reads that generation's passages, not the
    new file a sync renamed into place at the old offsets (a false 'index is corrupt')."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(6):
        (docs / f"f{n}.md").write_text(f"# Part {n}\n\nThe harbour {n} holds {n * 7} boats.\n")
    settings = IndexSettings(retriever="bm25")
    sync_folder(docs, tmp_path / "ix", index=settings)
    old = load_index(tmp_path / "ix")
    before = [(p.id, p.text) for p in old.passages]
    # a longer first file moves every later line of the new generation's passages.jsonl
    (docs / "f0.md").write_text("# Part 0\n\n" + "A much longer first document. " * 40 + "\n")
    (docs / "f3.md").unlink()
    sync_folder(docs, tmp_path / "ix", index=settings)
    assert [(p.id, p.text) for p in old.passages] == before  # iterated
    assert [(old.passages[i].id, old.passages[i].text) for i in range(len(before))] == before
    for pid, text in before:  # by id, as citations and neighbours read them
        assert old.passage(pid).text == text
    hits = old.retrieve("harbour boats", k=3)
    assert hits and all(old.passage(h.id).text == h.text for h in hits)
    new = load_index(tmp_path / "ix")
    assert any("much longer" in p.text for p in new.passages)
    assert not any(p.id.startswith("f3") for p in new.passages)


def _synced(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "aldra.txt").write_text("The harbour master code is 4711.\n")
    (docs / "other.txt").write_text("Boats are counted every spring.\n")
    settings = IndexSettings(retriever="bm25")
    sync_folder(docs, tmp_path / "ix", index=settings)
    return docs, tmp_path / "ix", settings


def test_a_sources_file_that_is_not_a_database_is_said_and_every_file_read_again(tmp_path):
    """D-H2: garbage in sources.sqlite: the sync says so and rewrites it, never a traceback."""
    import pytest

    from ragteam.retrieval.sources import DamagedSources, read_sources

    docs, ix, settings = _synced(tmp_path)
    (ix / "sources.sqlite").write_bytes(b"garbage " * 600)
    with pytest.raises(DamagedSources, match="reads every file again"):
        read_sources(ix)
    (docs / "new.txt").write_text("A new file about ropes.\n")
    report = sync_folder(docs, ix, index=settings)
    assert any("every file was read again" in n for n in report.notes)
    sources, _ = read_sources(ix)
    assert set(sources) == {"aldra.txt", "other.txt", "new.txt"}
    assert sync_folder(docs, ix, index=settings).notes == []  # repaired


def test_a_changed_byte_in_the_sync_state_is_never_indexed_as_the_files_text(tmp_path):
    """D-H2: 4711 -> 4712 inside sources.sqlite: the next rewrite reads the file, not the
    altered state, and search says what the file says."""
    import sqlite3

    docs, ix, settings = _synced(tmp_path)
    db = sqlite3.connect(ix / "sources.sqlite")
    with db:
        db.execute("UPDATE sources SET pieces = replace(pieces, '4711', '4712')")
    db.close()
    (docs / "unrelated.txt").write_text("Gulls nest on the pier.\n")
    report = sync_folder(docs, ix, index=settings)
    assert any("every file was read again" in n for n in report.notes)
    hits = load_index(ix).retrieve("harbour master code", k=1)
    assert "4711" in hits[0].text and "4712" not in hits[0].text


def test_a_damaged_sync_state_is_repaired_by_a_resync(tmp_path):
    """D-H2: the server's sync route and --watch resync with the recorded settings: a damaged
    state gives the index's own settings and a sync that reads every file again."""
    from ragteam.retrieval.resync import resync

    docs, ix, _settings = _synced(tmp_path)
    (ix / "sources.sqlite").write_bytes(b"\x00garbage" * 100)
    report = resync(ix)
    assert report.notes and load_index(ix).retrieve("harbour", k=1)[0].text.endswith("4711.")


def test_an_unsure_yes_or_no_is_shown_as_what_it_is_in_chat_and_mcp():
    """Issue 87: a yes/no the reader is not sure of is said as "not sure: yes" with its
    deciding sentence (chat), and MCP's `ask` gives the closest evidence with its kind."""
    from ragteam.server.mcp_app import _payload
    from ragteam.server.openai_chat import answer_text
    from ragteam.trace import Trace
    from ragteam.types import Answer, Evidence, Span

    sentence = "Logging cannot be turned off."
    span = Span("frob.md", 0, len(sentence), "no", sentence, 0, 0.4, kind="no")
    said = Answer(
        "Can I turn logging off?",
        "no",
        "read",
        [],
        Trace(),
        evidence=[Evidence(span, None, 0.4, True, "frob.md")],
    )
    assert said.grounding().level != "supported" and said.closest() is not None
    assert answer_text(said).startswith('Not sure: no. The deciding sentence: "Logging cannot')
    closest = _payload(said)["closest"]
    assert closest["kind"] == "no" and closest["sentence"] == sentence


def test_a_server_starting_beside_another_leaves_its_upload_in_flight_alone(tmp_path):
    """D-M1: the start-up cleanup removes only uploads whose writer is gone; an upload whose
    file vanished is an error naming it, and no empty file is left under its name."""
    import os

    import pytest

    from ragteam.errors import InputError
    from ragteam.server.uploads import UPLOAD_PREFIX, _link_new, clean_leftovers

    live = tmp_path / f"{UPLOAD_PREFIX}{os.getppid()}-abc123"  # another live process's
    dead = tmp_path / f"{UPLOAD_PREFIX}999999999-abc123"
    old = tmp_path / f"{UPLOAD_PREFIX}77d52def961b"  # named before the pid was
    for f in (live, dead, old):
        f.write_bytes(b"part of a body")
    assert sorted(clean_leftovers(tmp_path)) == sorted([dead.name, old.name])
    assert live.exists()
    with pytest.raises(InputError, match="lost before it was saved"):
        _link_new(tmp_path / f"{UPLOAD_PREFIX}gone", tmp_path / "raced.txt")
    assert not (tmp_path / "raced.txt").exists()


def test_markdown_lists_and_html_nested_past_the_parsers_limits_keep_their_text(tmp_path):
    """D-M2, D-M3: a Markdown list nested 8, 14 and 600 levels deep, an HTML page nested 20,000
    levels: every line's text is indexed (past markdown-it's limit with a note), none dropped
    in silence."""
    from ragteam.documents.base import ConvertSettings
    from ragteam.documents.text import MarkdownConverter
    from ragteam.documents.web import HtmlConverter

    for depth in (8, 14, 600):
        md = tmp_path / f"outline{depth}.md"
        lines = [f"{'  ' * i}- level {i} says the berth number is {100 + i}" for i in range(depth)]
        md.write_text("# Outline\n\n" + "\n".join(lines) + "\n")
        read = MarkdownConverter().convert(md, ConvertSettings())
        text = " ".join(u.text for u in read.units)
        assert all(f"berth number is {100 + i}" in text for i in range(depth))
        assert bool(read.notes) == (depth > 8)
    page = tmp_path / "deep.html"
    page.write_text(
        "<html><head><title>Deep</title></head><body><h1>Top</h1><p>first line</p>"
        + "".join(f"<div>Reply {n}" for n in range(20000))
        + "</body></html>"
    )
    read = HtmlConverter().convert(page, ConvertSettings())
    text = " ".join(u.text for u in read.units)
    assert "Reply 2100" in text and "Reply 19999" in text and "first line" in text
    assert read.title == "Deep" and "read as plain text" in read.notes[0]


def test_an_all_nul_html_file_is_binary_not_replacement_characters(tmp_path):
    """D-L5: NUL bytes named .html fail as binary, as they do named .txt; UTF-16 still reads."""
    import pytest

    from ragteam.documents.base import ConversionFailed, ConvertSettings
    from ragteam.documents.web import HtmlConverter

    nul = tmp_path / "nul.html"
    nul.write_bytes(b"\0" * 100_000)
    with pytest.raises(ConversionFailed, match="binary"):
        HtmlConverter().convert(nul, ConvertSettings())
    wide = tmp_path / "wide.html"
    wide.write_bytes("<html><body><p>Harbour code 4711</p></body></html>".encode("utf-16"))
    read = HtmlConverter().convert(wide, ConvertSettings())
    assert "4711" in " ".join(u.text for u in read.units)


def test_syncing_another_folder_into_an_index_is_refused_not_a_silent_replacement(tmp_path):
    """D-L3: a mistyped folder no longer deletes every passage of the index."""
    import pytest

    from ragteam.errors import InputError

    docs, ix, settings = _synced(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.txt").write_text("Something else entirely.\n")
    with pytest.raises(InputError, match="was synced from .*rebuild it"):
        sync_folder(other, ix, index=settings)
    assert "4711" in load_index(ix).retrieve("harbour master", k=1)[0].text
    sync_folder(other, ix, index=settings, fresh=True)  # a rebuild: asked for
    assert load_index(ix).retrieve("else", k=1)[0].text.startswith("Something else")


def test_the_front_doors_check_a_request_alike():
    """D-L4: `temperature: true` is refused as the chat route refuses it, and MCP says which
    argument is wrong (an empty question) instead of "internal error"."""
    from types import SimpleNamespace

    import pytest
    from pydantic import ValidationError

    from ragteam.server.asking import Asked
    from ragteam.server.mcp_app import _said

    with pytest.raises(ValidationError, match="valid number"):
        Asked(question="x", temperature=True)
    assert Asked(question="x", temperature=1).temperature == 1.0
    try:
        Asked(question="")
    except ValidationError as exc:
        said = _said(exc, SimpleNamespace(config=None))  # type: ignore[arg-type]
    assert said.startswith("question: String should have at least 1 character")


def test_a_per_file_budget_is_not_announced_as_a_settings_change():
    """D-L2: --file-memory-mb / --file-seconds bound conversion only: no 'changing the
    settings ... every file is read' on every sync given them."""
    from dataclasses import replace

    from ragteam.commands.index_settings import setting_changes
    from ragteam.retrieval.sync import SyncSettings

    old = (SyncSettings(), IndexSettings(retriever="bm25"))
    budget = (replace(old[0], file_memory_mb=1024, file_seconds=50), old[1])
    assert setting_changes(old, budget) == []
    tokens = (replace(old[0], passage_tokens=64), old[1])
    assert setting_changes(old, tokens) == [f"passage_tokens: {old[0].passage_tokens} -> 64"]


def test_a_server_path_sent_as_an_index_is_not_echoed_back(bm25_index_dir):
    """D-L1: the served folder's path, another path and a name with a slash get the same
    404, which confirms nothing about where the server keeps its indexes."""
    from fastapi.testclient import TestClient

    from ragteam.server import ServerConfig, create_app

    web = TestClient(create_app(ServerConfig(indexes={"demo": bm25_index_dir})))
    said = set()
    for index in (str(bm25_index_dir), str(bm25_index_dir) + "/", "/etc/passwd", "a/b"):
        got = web.post("/v1/answer", json={"question": "x", "index": index})
        assert got.status_code == 404
        said.add(got.json()["detail"])
    assert len(said) == 1 and "a path, not a served name" in said.pop()


def test_a_damaged_manifest_is_repaired_by_sync_with_the_retriever_its_files_show(tmp_path):
    """D-L6: `index sync` rebuilds an index whose manifest is truncated (it refused before),
    as BM25 when its files are BM25's, and the hint names that retriever."""
    from typer.testing import CliRunner

    from ragteam.cli import app
    from ragteam.retrieval.kinds import rebuild_hint

    docs, ix, _settings = _synced(tmp_path)  # a BM25 index
    manifest = ix / "manifest.json"
    manifest.write_text(manifest.read_text()[:40])
    assert "--retriever bm25" in rebuild_hint(ix)
    done = CliRunner().invoke(app, ["index", "sync", str(docs), "--out", str(ix)])
    assert done.exit_code == 0, done.output
    index = load_index(ix)
    assert index.retriever == "bm25" and "4711" in index.retrieve("harbour", k=1)[0].text
