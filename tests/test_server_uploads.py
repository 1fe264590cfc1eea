"""Adding and removing documents of a served folder index over HTTP (PUT and DELETE on
/v1/indexes/NAME/documents/FILE): the file lands in the folder, the index is synced, and the
answer says what the sync made of it; hostile names, sizes, links and keys change nothing."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("fastapi")
from docfiles import PDF_PAGES, make_pdf  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from ragteam.llm import FakeModel  # noqa: E402
from ragteam.retrieval import build_index, sync_folder  # noqa: E402
from ragteam.retrieval.index import IndexSettings  # noqa: E402
from ragteam.server import ServerConfig, create_app  # noqa: E402

BM25 = IndexSettings(retriever="bm25")
KEY = {"Authorization": "Bearer k3y"}


def served(tmp_path, **settings):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "base.md").write_text("# Base\n\nThe lighthouse stands on the northern cape.\n")
    sync_folder(folder, tmp_path / "ix", index=BM25)
    config = ServerConfig(indexes={"docs": tmp_path / "ix"}, **settings)
    return folder, TestClient(create_app(config, FakeModel(lambda m, p: "x")))


def leftovers(folder):
    return [p.name for p in folder.iterdir() if p.name.startswith(".ragteam-upload-")]


def test_a_document_added_is_synced_and_searchable_then_removed(tmp_path):
    folder, client = served(tmp_path)
    with client:
        body = b"# Ferry\n\nThe ferry captain is Oda Rusk.\n"
        added = client.put("/v1/indexes/docs/documents/ferry.md", content=body)
        assert added.status_code == 200, added.text
        done = added.json()
        assert done["file"]["status"] == "read" and done["file"]["passages"] >= 1
        assert done["synced"] and done["sync"]["changes"]["new"] == ["ferry.md"]
        assert (folder / "ferry.md").read_bytes() == body and not leftovers(folder)
        hits = client.post(
            "/v1/answer", json={"question": "Who is the ferry captain?", "strategy": "oner"}
        ).json()
        assert any(c["passage_id"] == "ferry.md" for c in hits["read"])
        again = client.put("/v1/indexes/docs/documents/ferry.md", content=b"# Ferry\n\nNew.\n")
        assert again.status_code == 409 and "replace=true" in again.json()["detail"]
        replaced = client.put(
            "/v1/indexes/docs/documents/ferry.md?replace=true", content=b"# Ferry\n\nThe tug.\n"
        )
        assert replaced.status_code == 200 and replaced.json()["sync"]["changes"]["changed"]
        gone = client.delete("/v1/indexes/docs/documents/ferry.md")
        assert gone.status_code == 200, gone.text
        assert gone.json()["file"] is None and gone.json()["sync"]["changes"]["deleted"] == [
            "ferry.md"
        ]
        assert not (folder / "ferry.md").exists()
        assert client.delete("/v1/indexes/docs/documents/ferry.md").status_code == 404
        assert str(tmp_path) not in added.text + gone.text  # no server paths


def test_a_file_that_is_not_what_its_name_says_is_kept_and_reported(tmp_path):
    folder, client = served(tmp_path)
    with client:
        fake = client.put("/v1/indexes/docs/documents/scan.pdf", content=b"just some text")
        assert fake.status_code == 200, fake.text
        assert fake.json()["file"]["status"] == "failed" and fake.json()["file"]["reason"]
        real = client.put(
            "/v1/indexes/docs/documents/report.pdf",
            content=make_pdf(tmp_path / "report.pdf").read_bytes(),
        )
        state = real.json()["file"]
        assert state["status"] == "read" and state["pages"] == len(PDF_PAGES)


@pytest.mark.parametrize(
    ("name", "said"),
    [
        (".hidden.md", "hidden"),
        ("tool.exe", "no converter reads .exe"),
        ("ctrl%07.md", "control characters"),
        ("a" * 300 + ".md", "over 255 bytes"),
        ("back%5Cslash.md", "plain file name"),
    ],
)
def test_names_that_are_not_plain_supported_file_names_are_refused(tmp_path, name, said):
    folder, client = served(tmp_path)
    with client:
        refused = client.put(f"/v1/indexes/docs/documents/{name}", content=b"MZ\x90\x00\x03")
        assert refused.status_code == 400 and said in refused.json()["detail"]
    assert sorted(p.name for p in folder.iterdir()) == ["base.md"]


def test_a_path_out_of_the_folder_writes_nothing(tmp_path):
    folder, client = served(tmp_path)
    with client:
        for path in ("..%2Fescape.md", "%2E%2E%2Fescape.md", "sub%2Fx.md"):
            refused = client.put(f"/v1/indexes/docs/documents/{path}", content=b"text")
            assert refused.status_code in (400, 404, 405), refused.text
    assert not (tmp_path / "escape.md").exists()
    assert sorted(p.name for p in folder.iterdir()) == ["base.md"]


def test_a_link_in_the_folder_is_never_written_through(tmp_path):
    folder, client = served(tmp_path)
    outside = tmp_path / "outside.md"
    outside.write_text("mine")
    os.symlink(outside, folder / "link.md")
    with client:
        refused = client.put("/v1/indexes/docs/documents/link.md?replace=true", content=b"x")
        assert refused.status_code == 400 and "link" in refused.json()["detail"]
        assert client.delete("/v1/indexes/docs/documents/link.md").status_code == 400
    assert outside.read_text() == "mine" and (folder / "link.md").is_symlink()


def test_a_body_over_the_limit_is_refused_as_it_arrives_and_leaves_nothing(tmp_path):
    folder, client = served(tmp_path, max_upload_mb=1)
    with client:
        said = client.put("/v1/indexes/docs/documents/big.md", content=b"a" * (2 * 2**20))
        assert said.status_code == 413 and "1 MiB" in said.json()["detail"]

        def chunks():  # no Content-Length: counted as it arrives
            for _ in range(40):
                yield b"b" * 65536

        streamed = client.put("/v1/indexes/docs/documents/big.md", content=chunks())
        assert streamed.status_code == 413
        empty = client.put("/v1/indexes/docs/documents/empty.md", content=b"")
        assert empty.status_code == 400 and "empty" in empty.json()["detail"]
    assert sorted(p.name for p in folder.iterdir()) == ["base.md"] and not leftovers(folder)


def test_with_a_key_uploads_need_it_and_a_jsonl_index_takes_none(tmp_path):
    folder, client = served(tmp_path, api_key="k3y")
    with client:
        assert client.put("/v1/indexes/docs/documents/a.md", content=b"# A\n\nx\n").status_code == (
            401
        )
        assert client.delete("/v1/indexes/docs/documents/base.md").status_code == 401
        ok = client.put("/v1/indexes/docs/documents/a.md", content=b"# A\n\nx\n", headers=KEY)
        assert ok.status_code == 200, ok.text
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "d1", "title": "T", "text": "The tide gauge."}\n')
    build_index(corpus, tmp_path / "jx", retriever="bm25")
    config = ServerConfig(indexes={"j": tmp_path / "jx"})
    with TestClient(create_app(config, FakeModel(lambda m, p: "x"))) as plain:
        refused = plain.put("/v1/indexes/j/documents/a.md", content=b"text")
        assert refused.status_code == 400 and "folder" in refused.json()["detail"]
        assert plain.put("/v1/indexes/nope/documents/a.md", content=b"x").status_code == 404


def test_a_file_no_converter_reads_can_still_be_removed(tmp_path):
    """The panel lists a skipped photo with a remove button: removing needs only a plain name
    at the folder's top (the suffix rule is for adding)."""
    folder, client = served(tmp_path)
    (folder / "photo.heic").write_bytes(b"\x00not a document")
    with client:
        gone = client.delete("/v1/indexes/docs/documents/photo.heic")
        assert gone.status_code == 200, gone.text
        assert gone.json()["file"] is None
        assert client.delete("/v1/indexes/docs/documents/.hidden").status_code == 400
    assert sorted(p.name for p in folder.iterdir()) == ["base.md"]


def test_a_file_saved_while_an_upload_streams_is_not_overwritten(tmp_path):
    """N-C1: the name is checked when the upload starts and taken only if still free at its
    end; a file the user saved meanwhile stays as it is and the upload is a 409."""
    import asyncio

    from ragteam.server.uploads import NameTaken, receive

    folder = tmp_path / "docs"
    folder.mkdir()
    target = folder / "notes.md"

    async def body():
        yield b"# Upload\n\n"
        target.write_bytes(b"saved by the user")  # appears while the body streams
        yield b"The uploaded text.\n"

    with pytest.raises(NameTaken):
        asyncio.run(receive(body(), target, 2**20, replace=False))
    assert target.read_bytes() == b"saved by the user"
    assert not leftovers(folder)


def test_concurrent_uploads_of_one_name_one_wins_the_others_get_409(tmp_path):
    import asyncio

    from ragteam.server.uploads import NameTaken, receive

    folder = tmp_path / "docs"
    folder.mkdir()
    target = folder / "same.md"

    async def body(n):
        for _ in range(3):
            await asyncio.sleep(0)  # interleave the twelve streams
            yield f"# Upload {n}\n".encode()

    async def all_of_them():
        return await asyncio.gather(
            *(receive(body(n), target, 2**20, replace=False) for n in range(12)),
            return_exceptions=True,
        )

    results = asyncio.run(all_of_them())
    won = [r for r in results if isinstance(r, int)]
    assert len(won) == 1 and all(isinstance(r, NameTaken) for r in results if r not in won)
    assert target.read_bytes().startswith(b"# Upload ") and not leftovers(folder)


def test_upload_leftovers_of_a_kill_are_removed_when_the_server_starts(tmp_path):
    folder, _ = served(tmp_path)
    (folder / ".ragteam-upload-abc123").write_bytes(b"half a file")
    config = ServerConfig(indexes={"docs": tmp_path / "ix"})
    with TestClient(create_app(config, FakeModel(lambda m, p: "x"))):
        assert not leftovers(folder)
    assert (folder / "base.md").exists()


@pytest.mark.parametrize(
    ("fail", "error", "status", "said"),
    [  # N-L1: a full disk was a 500 with a traceback, a read-only folder a 401
        ("os.fsync", OSError(28, "No space left on device"), 507, "disk is full"),
        ("open", PermissionError(13, "Permission denied"), 403, "may not write there"),
    ],
)
def test_a_full_disk_or_a_folder_the_server_may_not_write_is_said_and_loses_nothing(
    tmp_path, monkeypatch, fail, error, status, said
):
    import ragteam.server.uploads as uploads

    folder, client = served(tmp_path, api_key="k3y")

    def failing(*args, **kwargs):
        raise error

    with client:
        if fail == "open":
            monkeypatch.setattr(uploads, "open", failing, raising=False)
        else:
            monkeypatch.setattr(uploads.os, "fsync", failing)
        put = client.put("/v1/indexes/docs/documents/ferry.md", content=b"# Ferry\n", headers=KEY)
        assert put.status_code == status, put.text
        assert said in put.json()["detail"] and str(tmp_path) not in put.text
        assert not (folder / "ferry.md").exists() and not leftovers(folder)
        monkeypatch.undo()
        assert client.put("/v1/indexes/docs/documents/x.md", content=b"# X\n").status_code == 401
        ok = client.put("/v1/indexes/docs/documents/ferry.md", content=b"# F\n", headers=KEY)
        assert ok.status_code == 200, ok.text  # the next try, with room, works


def test_a_text_file_of_any_suffix_is_taken_and_read_as_plain_text(tmp_path):
    folder, client = served(tmp_path)
    with client:
        put = client.put(
            "/v1/indexes/docs/documents/squid.conf",
            content=b"#  TAG: cache_mem (bytes)\n#Default:\n# cache_mem 256 MB\n",
        )
        assert put.status_code == 200, put.text
        state = put.json()["file"]
        assert state["status"] == "read" and "read as plain text" in " ".join(state["notes"])
    assert (folder / "squid.conf").is_file()
