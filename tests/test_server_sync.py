"""A served folder index follows its folder: a sync beside the server (CLI), the sync route
(with the server's key only), and `serve --watch`; the page and API then answer and cite from
the new generation, and `/healthz` says which generation is loaded."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("fastapi")
from docfiles import make_folder  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from ragteam.llm import FakeModel  # noqa: E402
from ragteam.retrieval import sync_folder  # noqa: E402
from ragteam.retrieval.index import IndexSettings  # noqa: E402
from ragteam.server import ServerConfig, create_app  # noqa: E402

BM25 = IndexSettings(retriever="bm25")


def served(folder, out, **settings):
    sync_folder(folder, out, index=BM25)
    config = ServerConfig(indexes={"docs": out}, **settings)
    return TestClient(create_app(config, FakeModel(lambda m, p: "Jonas Quell")))


def ask(client, question, key=None):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    body = {"question": question, "index": "docs", "strategy": "oner"}
    response = client.post("/v1/answer", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


def test_answers_cite_pages_and_follow_a_sync_beside_the_server(tmp_path):
    folder = make_folder(tmp_path / "docs")
    with served(folder, tmp_path / "ix") as client:
        first = ask(client, "Who is the harbour master?")
        assert 'report.pdf p. 3 ("1") § 3 Staff' in [c["locator"] for c in first["citations"]]
        before = client.get("/healthz").json()["indexes"]["docs"]
        (folder / "late.md").write_text("# Late\n\nThe ferry captain is Oda Rusk.")
        sync_folder(folder, tmp_path / "ix", index=BM25)
        later = ask(client, "Who is the ferry captain?")
        assert any(c["passage_id"] == "late.md" for c in later["read"])
        after = client.get("/healthz").json()["indexes"]["docs"]
        assert after["passages"] == before["passages"] + 1
        passage = client.get("/v1/passages/docs/report.pdf%232").json()
        assert passage["locator"]["page"] == 3 and passage["locator"]["page_label"] == "1"


def test_a_file_named_with_a_newline_is_a_passage_the_api_can_fetch(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "new\nline.txt").write_text("The tide gauge stands on pier four.")
    with served(folder, tmp_path / "ix") as client:
        got = client.get("/v1/passages/docs/new%0Aline.txt")
        assert got.status_code == 200, got.text
        assert "tide gauge" in got.json()["text"]
        assert client.get("/v1/passages/docs/new%0Aother.txt").status_code == 404


def test_the_sync_route_needs_the_servers_key(tmp_path):
    folder = make_folder(tmp_path / "docs")
    with served(folder, tmp_path / "ix") as client:
        refused = client.post("/v1/indexes/docs/sync")
        assert refused.status_code == 403 and "key" in refused.json()["detail"]
    with served(folder, tmp_path / "ix", api_key="k3y") as client:
        assert client.post("/v1/indexes/docs/sync").status_code == 401
        (folder / "MEETING.TXT").unlink()
        done = client.post("/v1/indexes/docs/sync", headers={"Authorization": "Bearer k3y"})
        assert done.status_code == 200, done.text
        report = done.json()
        assert report["changes"]["deleted"] == ["MEETING.TXT"] and report["rewritten"]
        assert {"path": "photo.heic", "status": "skipped"}.items() <= report["not_read"][0].items()
        assert str(tmp_path) not in done.text  # no server paths


def test_serve_watch_syncs_when_the_folder_changes(tmp_path):
    folder = make_folder(tmp_path / "docs")
    with served(folder, tmp_path / "ix", watch=True) as client:
        deadline = time.time() + 30
        while time.time() < deadline:
            watch = client.get("/healthz").json()["indexes"].get("docs", {}).get("watch", {})
            if watch.get("last_sync"):
                break
            time.sleep(0.2)
        assert watch["last_sync"]["ok"] and not watch["last_sync"]["rewritten"]  # rescan at start
        (folder / "new.txt").write_text("The lighthouse lamp was lit by Ada Brenn.")
        while time.time() < deadline:
            state = client.get("/healthz").json()["indexes"]["docs"]
            if state["watch"]["last_sync"]["rewritten"]:
                break
            time.sleep(0.2)
        assert state["watch"]["last_sync"]["rewritten"]
        read = ask(client, "Who lit the lighthouse lamp?")["read"]
        assert any(c["passage_id"] == "new.txt" for c in read)


def test_the_watch_outlives_any_failure_and_shows_no_server_path(tmp_path):
    """M7 and M11 of hardening round 3: an OSError in a sync (not a RagteamError) used to end
    the watch thread while /healthz still said watching; and a failure's detail showed the
    server's folders to anyone."""
    import threading

    from ragteam.server.config import ServerConfig
    from ragteam.server.watching import _watch

    folder = tmp_path / "docs"
    folder.mkdir()
    calls = []

    class Service:
        config = ServerConfig(indexes={"docs": tmp_path / "ix"})
        closing = threading.Event()

        def sync(self, name):
            calls.append(name)
            if len(calls) == 1:
                raise OSError(5, "Input/output error", "/srv/private/docs/a.pdf")
            return {"converted": 1, "embedded": 0, "rewritten": True, "segment": "", "passages": 3}

    service, status = Service(), {"watching": True, "last_sync": None}
    thread = threading.Thread(target=_watch, args=(service, "docs", folder, status), daemon=True)
    thread.start()
    try:
        _until(lambda: status["last_sync"] is not None)
        failed = status["last_sync"]
        assert failed["ok"] is False and "OSError" in failed["detail"]
        assert "/srv/private" not in failed["detail"]
        (folder / "new.txt").write_text("The ferry leaves at nine.")
        _until(lambda: status["last_sync"]["ok"] is True)  # still watching
        assert thread.is_alive()
    finally:
        service.closing.set()
        thread.join(timeout=10)


def _until(condition, seconds=20.0):
    import time

    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_sync_reasons_and_unusable_indexes_show_no_server_path(tmp_path):
    """M11 and L5: a failed file's reason in the sync route's report, and a missing served
    index in GET /v1/indexes, named the server's absolute paths."""
    folder = make_folder(tmp_path / "docs")
    with served(folder, tmp_path / "ix", api_key="k3y") as client:
        (folder / "broken.docx").write_bytes(b"PK\x03\x04 not really a word file")
        done = client.post("/v1/indexes/docs/sync", headers={"Authorization": "Bearer k3y"})
        assert done.status_code == 200, done.text
        assert any(r["path"] == "broken.docx" for r in done.json()["not_read"])
        assert str(tmp_path) not in done.text
    config = ServerConfig(indexes={"gone": tmp_path / "nowhere"}, api_key="k3y")
    key = {"Authorization": "Bearer k3y"}
    with TestClient(create_app(config, FakeModel(lambda m, p: "x"))) as client:
        listed = client.get("/v1/indexes", headers=key)
        assert listed.json()[0]["ok"] is False and str(tmp_path) not in listed.text
        # L5's rest: it read "no index at index 'gone'; build one with ... --out index 'gone'",
        # and its sync "was not synced from a folder"; now one sentence by its name, everywhere
        said = "index 'gone' is not built yet: the server's operator must build it"
        assert said in listed.json()[0]["detail"]
        asked = client.post("/v1/answer", json={"question": "Who?", "index": "gone"}, headers=key)
        assert asked.status_code == 409 and said in asked.json()["detail"]
        synced = client.post("/v1/indexes/gone/sync", headers=key)
        assert synced.status_code == 409 and said in synced.json()["detail"]
        health = client.get("/healthz", headers=key).json()["indexes"]["gone"]
        assert said in health["detail"] and str(tmp_path) not in str(health)


def test_the_documents_route_lists_every_file_and_flags_one_that_gave_almost_nothing(tmp_path):
    from docfiles import make_pdf

    folder = make_folder(tmp_path / "docs")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7 not really")
    # a PDF whose pages hold a few words each (what scanned pages with a stray line give)
    make_pdf(folder / "thin.pdf", pages=[("", "Seen."), ("", "Kept."), ("", "Done.")])
    with served(folder, tmp_path / "ix") as client:
        listed = client.get("/v1/indexes/docs/documents").json()
    by_path = {d["path"]: d for d in listed["documents"]}
    assert listed["folder"] and set(by_path) >= {"report.pdf", "photo.heic", "broken.pdf"}
    report = by_path["report.pdf"]
    assert report["status"] == "read" and report["pages"] >= 3 and report["passages"] >= 3
    assert report["warning"] == ""
    assert by_path["deck.pptx"]["slides"] >= 1
    assert by_path["photo.heic"]["status"] == "skipped" and by_path["photo.heic"]["reason"]
    assert by_path["broken.pdf"]["status"] == "failed" and by_path["broken.pdf"]["reason"]
    assert "OCR" in by_path["thin.pdf"]["warning"]
    assert listed["counts"]["skipped"] == 1 and listed["counts"]["failed"] == 1
    assert str(tmp_path) not in str(listed)  # no server path


def test_healthz_lists_every_served_index_from_the_start_with_its_last_sync(tmp_path):
    """Issue 69: /healthz listed no index until the first question, and no sync outcome
    without --watch; a failed sync's detail stays with the key."""
    from fastapi.testclient import TestClient

    from ragteam.llm import FakeModel
    from ragteam.server import ServerConfig, create_app

    folder = make_folder(tmp_path / "docs")
    sync_folder(folder, tmp_path / "ix", index=BM25)
    config = ServerConfig(indexes={"docs": tmp_path / "ix", "gone": tmp_path / "nothing"})
    with TestClient(create_app(config, FakeModel(lambda m, p: "x"))) as client:
        start = client.get("/healthz").json()["indexes"]
        assert start["docs"]["loaded_at"] is None and start["docs"]["passages"] > 0
        assert start["gone"]["usable"] is False and "not built yet" in start["gone"]["detail"]
        assert str(tmp_path) not in str(start)  # no server path, even on a server with no key
        added = client.put("/v1/indexes/docs/documents/late.md", content=b"# Late\n\nA ferry.\n")
        assert added.status_code == 200, added.text
        now = client.get("/healthz").json()["indexes"]["docs"]
        assert now["last_sync"]["ok"] is True and now["last_sync"]["changes"]["new"] == 1
        assert now["loaded_at"] is not None and now["passages"] == start["docs"]["passages"] + 1
    keyed = ServerConfig(indexes={"gone": tmp_path / "nothing"}, api_key="k3y")
    with TestClient(create_app(keyed, FakeModel(lambda m, p: "x"))) as client:
        shown = client.get("/healthz").json()["indexes"]["gone"]
        assert "withheld" in shown["detail"] and str(tmp_path) not in str(shown)


def test_a_served_index_builds_its_id_table_at_load_not_at_the_first_citation(
    bm25_index_dir, tmp_path, monkeypatch
):
    from ragteam.commands.demo import demo_corpus_path
    from ragteam.retrieval import build_index, load_index, passage_file
    from ragteam.server.service import Service

    assert load_index(bm25_index_dir).passages.lookups_ready  # written with the index
    older = tmp_path / "older"  # an index written before the table was kept beside it
    with monkeypatch.context() as patch:
        patch.setattr(passage_file, "_save_tables", lambda *_args: None)
        build_index(demo_corpus_path(), older, retriever="bm25")
    assert not load_index(older).passages.lookups_ready  # a plain load leaves it
    service = Service(ServerConfig(indexes={"demo": older}))
    index = service.index("demo")
    _until(lambda: index.passages.lookups_ready, seconds=10)
