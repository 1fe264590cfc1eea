"""Hardening, round 4 (issue 67): each defect of the 2026-11-28 re-probe that has a fix here,
with a test that fails without it."""

from __future__ import annotations

import pytest


def test_text_without_whitespace_is_cut_within_the_token_budget():
    """N-H1: a 2 MB base64 text was one 2,097,152-character passage."""
    import base64

    from ragteam.documents.base import Unit
    from ragteam.documents.chunking import chunk

    blob = base64.b64encode(bytes(range(256)) * 6000).decode()  # 2,048,000 characters
    budget = 200
    pieces = chunk([Unit("Intro words here.\n\n" + blob)], budget, len)  # one token a character
    assert len(pieces) > 10_000 // budget
    assert max(len(p.text) for p in pieces) <= budget
    assert "".join(p.text for p in pieces[1:]) == blob  # nothing lost, in order


def test_syncs_after_a_folder_cannot_be_listed_keep_a_consistent_state(tmp_path, monkeypatch):
    """N-H5: the second sync that had to rewrite crashed (UNIQUE constraint failed)."""
    import os

    from ragteam.retrieval import load_index, sync_folder
    from ragteam.retrieval.index import IndexSettings
    from ragteam.retrieval.scan import os as scan_os

    folder = tmp_path / "perm"
    (folder / "open").mkdir(parents=True)
    (folder / "secret").mkdir()
    (folder / "open" / "a.txt").write_text("The lighthouse keeper is Ada.\n")
    (folder / "secret" / "s.txt").write_text("The vault code is 4417.\n")
    settings = IndexSettings(retriever="bm25")
    sync_folder(folder, tmp_path / "ix", index=settings)
    real_walk = os.walk

    def walk_without_secret(top, **kwargs):  # noqa: ANN001, ANN202
        onerror = kwargs.get("onerror")
        for here, dirs, files in real_walk(top, **kwargs):
            if here.endswith("secret"):
                onerror(PermissionError(13, "Permission denied", here))
                continue
            yield here, dirs, files

    monkeypatch.setattr(scan_os, "walk", walk_without_secret)
    for n in range(3):  # each must rewrite: a new file every time
        (folder / "open" / f"b{n}.txt").write_text(f"New note {n}.\n")
        report = sync_folder(folder, tmp_path / "ix", index=settings)
        paths = [s.path for s in report.files]
        assert len(paths) == len(set(paths)) and "secret/" in paths
    texts = " ".join(p.text for p in load_index(tmp_path / "ix").passages)
    assert "4417" in texts and "New note 2." in texts  # kept as it was, and the new read


@pytest.mark.parametrize("text", [":a" * 100_000, "`a <b" * 40_000, ":x:`a" * 40_000])
def test_rst_inline_markup_is_read_in_linear_time(text):
    """N-H3: 200 KB of `:a` took 58 s (a backtracking pattern), outside any time budget."""
    import time

    from ragteam.documents.text import rst_units

    started = time.perf_counter()
    rst_units(text)
    assert time.perf_counter() - started < 2.0  # was a minute


def test_a_page_nested_thousands_of_levels_deep_is_read_whole(tmp_path):
    """N-M3: 1,000 or more unclosed <div>s failed whole with a RecursionError."""
    from ragteam.documents.base import ConvertSettings
    from ragteam.documents.web import HtmlConverter

    posts = "".join(f"<div class=post>Reply {n}: text" for n in range(2000))
    (tmp_path / "deep.html").write_text(f"<html><body>{posts}</body></html>")
    converted = HtmlConverter().convert(tmp_path / "deep.html", ConvertSettings())
    text = " ".join(u.text for u in converted.units)
    assert "Reply 0:" in text and "Reply 1999:" in text


def test_file_names_with_escape_sequences_are_shown_escaped_by_search_and_ask(tmp_path):
    """N-L4: `search` and `ask` printed a name's escape sequences raw (red\\x1b[31mname.txt)."""
    from typer.testing import CliRunner

    from ragteam.cli import app
    from ragteam.retrieval import sync_folder
    from ragteam.retrieval.index import IndexSettings

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "red\x1b[31mname.txt").write_text("The lighthouse keeper is Ada Rusk.\n")
    sync_folder(folder, tmp_path / "ix", index=IndexSettings(retriever="bm25"))
    for args in (
        ["search", "lighthouse keeper", "--index", str(tmp_path / "ix")],
        ["ask", "Who is the lighthouse keeper?", "--index", str(tmp_path / "ix")],
    ):
        said = CliRunner().invoke(app, args)
        assert said.exit_code == 0, said.output
        assert "\x1b[31m" not in said.output and "\\x1b" in said.output


def test_healthz_names_no_file_without_the_key(tmp_path, monkeypatch):
    """M11: an open /healthz said a failed sync's detail (`including secret.txt`)."""
    from fastapi.testclient import TestClient

    from ragteam.llm import FakeModel
    from ragteam.retrieval import sync_folder
    from ragteam.retrieval.index import IndexSettings
    from ragteam.server import ServerConfig, create_app
    from ragteam.server.service import Service

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nText.\n")
    sync_folder(folder, tmp_path / "ix", index=IndexSettings(retriever="bm25"))
    failed = {"at": "now", "ok": False, "detail": "STILL SERVES ... including secret.txt"}
    monkeypatch.setattr(
        Service, "generations", lambda self: {"docs": {"watch": {"last_sync": failed}}}
    )
    config = ServerConfig(indexes={"docs": tmp_path / "ix"}, api_key="k3y")
    with TestClient(create_app(config, FakeModel(lambda m, p: "x"))) as client:
        open_ = client.get("/healthz").json()["indexes"]["docs"]["watch"]["last_sync"]
        keyed = client.get("/healthz", headers={"Authorization": "Bearer k3y"}).json()
    assert "secret.txt" not in str(open_) and open_["ok"] is False
    assert "secret.txt" in keyed["indexes"]["docs"]["watch"]["last_sync"]["detail"]


def _served(tmp_path, files):  # noqa: ANN001, ANN202
    from fastapi.testclient import TestClient

    from ragteam.llm import FakeModel
    from ragteam.retrieval import sync_folder
    from ragteam.retrieval.index import IndexSettings
    from ragteam.server import ServerConfig, create_app

    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    sync_folder(folder, tmp_path / "ix", index=IndexSettings(retriever="bm25"))
    config = ServerConfig(indexes={"docs": tmp_path / "ix"})
    return folder, TestClient(create_app(config, FakeModel(lambda m, p: "x")))


def test_removing_the_only_document_is_refused_before_the_disk_is_touched(tmp_path):
    """N-M2: the file was deleted, then 400, and its text still served."""
    folder, client = _served(tmp_path, {"secret.txt": "The vault code is 4711.\n"})
    with client:
        refused = client.delete("/v1/indexes/docs/documents/secret.txt")
        assert refused.status_code == 409 and "only file" in refused.json()["detail"]
        assert (folder / "secret.txt").exists()
        added = client.put("/v1/indexes/docs/documents/other.txt", content=b"A ferry.\n")
        assert added.status_code == 200
        assert client.delete("/v1/indexes/docs/documents/secret.txt").status_code == 200
        assert not (folder / "secret.txt").exists()


def test_an_upload_whose_sync_fails_says_it_was_written_and_why_it_is_not_served(
    tmp_path, monkeypatch
):
    """N-M2: a PUT answered 400 though it had written the file (its sync failed after)."""
    from ragteam.errors import InputError
    from ragteam.server.service import Service

    folder, client = _served(tmp_path, {"aldra.txt": "Aldra keeps the ledger.\n"})

    def failing(self, name):  # noqa: ANN001, ANN202 - a sync refused after the write
        raise InputError("passage id aldra.txt#0 stands in two files: rename one")

    monkeypatch.setattr(Service, "sync", failing)
    with client:
        said = client.put("/v1/indexes/docs/documents/later.txt", content=b"Later text.\n")
    body = said.json()
    assert said.status_code == 200 and body["synced"] is False
    assert "two files" in body["sync_failed"] and (folder / "later.txt").exists()


def test_the_abstain_message_shows_the_question_searched_not_the_team_s_own_queries():
    """Issue 69: "... ext4 filesystem? 31 4.2" (read's second search) was shown to the asker."""
    from ragteam.asking.posed import _searched

    said = _searched(["Which file system?", "Which file system? 31 4.2"], 15)
    assert (
        said
        == '"Which file system?" and 1 more searches (15 passages read, none supports an answer).'
    )
    assert "31 4.2" not in said


def test_a_jsonl_without_line_ends_is_refused_without_reading_it_whole(tmp_path):
    """N-H6: `truncate -s 4000M big.jsonl` in a folder was read as one line, killed at 6 GB."""
    import resource

    from ragteam.common.jsonl import MAX_LINE_BYTES, read_objects
    from ragteam.errors import InputError

    sparse = tmp_path / "big.jsonl"
    with sparse.open("wb") as handle:
        handle.truncate(4000 * 2**20)  # 4 GB of NUL, no line end, no disk used
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(InputError, match="line over|NUL"):
        list(read_objects(sparse))
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb * 1024 < 4 * MAX_LINE_BYTES
    long_row = tmp_path / "long.jsonl"
    long_row.write_bytes(b'{"text": "' + b"a" * (MAX_LINE_BYTES + 10) + b'"}\n')
    with pytest.raises(InputError, match="line over"):
        list(read_objects(long_row))
