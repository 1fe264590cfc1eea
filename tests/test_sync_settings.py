"""Sync states that tell the truth (hardening round 3, M5 and M6): a file renamed to a suffix
another converter reads is converted again, and `index sync` run again without its flags
keeps the index's settings, while a flag that changes one says what changes."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ragteam.cli import app
from ragteam.retrieval import load_index, sync_folder
from ragteam.retrieval.index import IndexSettings

runner = CliRunner()
PAGE = (
    "<html><head><title>Tolls</title><script>var secretToken='abc123';</script></head>"
    "<body><nav>Home | About</nav><h1>Bridge tolls</h1><p>The Tarrin bridge toll is 3 crowns."
    "</p></body></html>\n"
)


def test_a_rename_to_another_converter_converts_again(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.txt").write_text(PAGE)
    bm25 = IndexSettings(retriever="bm25")
    sync_folder(docs, tmp_path / "ix", index=bm25)
    (docs / "page.txt").rename(docs / "page.html")
    report = sync_folder(docs, tmp_path / "ix", index=bm25)
    assert report.changes["renamed"] == [] and report.changes["new"] == ["page.html"]
    text = " ".join(p.text for p in load_index(tmp_path / "ix").passages)
    assert "3 crowns" in text and "secretToken" not in text and "<p>" not in text


def _sync(*args):
    result = runner.invoke(app, ["index", "sync", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_sync_without_flags_keeps_the_index_settings_and_a_flag_says_what_it_changes(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(3):
        (docs / f"d{n}.md").write_text(f"# Doc {n}\n\nThe ferry {n} leaves pier {n} at nine.\n")
    ix = tmp_path / "ix"
    _sync(docs, "--out", ix, "--retriever", "bm25", "--passage-tokens", "64")
    again = _sync(docs, "--out", ix)
    assert "3 unchanged" in again and "changing" not in again
    assert json.loads((ix / "manifest.json").read_text())["retriever"] == "bm25"
    changed = _sync(docs, "--out", ix, "--passage-tokens", "48")
    assert "passage_tokens: 64 -> 48" in " ".join(changed.split()) and "retriever" not in changed
    assert json.loads((ix / "manifest.json").read_text())["retriever"] == "bm25"
    before = (ix / "manifest.json").read_text()
    for bad in (["--html", "all"], ["--file-memory-mb", "10"]):  # refused before any work
        result = runner.invoke(app, ["index", "sync", str(docs), "--out", str(ix), *bad])
        assert result.exit_code != 0 and bad[0] in result.output, result.output
    assert (ix / "manifest.json").read_text() == before


def test_a_folder_that_cannot_be_listed_is_failed_and_its_passages_kept(tmp_path, monkeypatch):
    import errno
    import os

    from ragteam.retrieval import scan as scan_module

    docs = tmp_path / "docs"
    (docs / "open").mkdir(parents=True)
    (docs / "secret").mkdir()
    (docs / "open" / "a.txt").write_text("The ferry leaves at nine.")
    (docs / "secret" / "s.txt").write_text("The vault code is kept by the harbour master.")
    bm25 = IndexSettings(retriever="bm25")
    sync_folder(docs, tmp_path / "ix", index=bm25)
    real_walk = os.walk

    def walk(top, **kwargs):  # `secret` cannot be listed, as under EACCES, EIO or ESTALE
        for folder, dirs, files in real_walk(top, **kwargs):
            if "secret" in dirs:
                dirs.remove("secret")
                kwargs["onerror"](
                    PermissionError(errno.EACCES, "Permission denied", str(docs / "secret"))
                )
            yield folder, dirs, files

    monkeypatch.setattr(scan_module.os, "walk", walk)
    report = sync_folder(docs, tmp_path / "ix", index=bm25)
    status = {s.path: (s.status, s.reason) for s in report.files}
    assert status["secret/"][0] == "failed" and "Permission denied" in status["secret/"][1]
    assert report.changes["deleted"] == []
    text = " ".join(p.text for p in load_index(tmp_path / "ix").passages)
    assert "vault code" in text and "ferry" in text


def test_deleting_the_last_readable_file_says_loudly_that_its_text_is_still_served(tmp_path):
    """M2: the sync is refused (an index holds text), and the refusal says that the index
    still serves the deleted file's text and how to stop it; it said only "the folder is
    empty" while search still returned the deleted text."""
    import pytest

    from ragteam.errors import InputError

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "secret.txt").write_text("Confidential: the vault code is 4711.")
    bm25 = IndexSettings(retriever="bm25")
    sync_folder(docs, tmp_path / "ix", index=bm25)
    (docs / "secret.txt").unlink()
    with pytest.raises(InputError) as refused:
        sync_folder(docs, tmp_path / "ix", index=bm25)
    said = str(refused.value)
    assert "STILL SERVES" in said and "secret.txt" in said and "delete the index folder" in said


def test_a_sync_rewrites_a_damaged_index_even_with_nothing_to_re_index(tmp_path):
    """L4: four flipped bytes in a retriever's file made `index info` say broken while `index
    sync` said "nothing to re-index" (and --watch and the sync route reported success)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("The ferry leaves at nine from pier two.")
    bm25 = IndexSettings(retriever="bm25")
    ix = tmp_path / "ix"
    sync_folder(docs, ix, index=bm25)
    target = next(p for p in (ix / "bm25").iterdir() if p.suffix == ".npy")
    data = bytearray(target.read_bytes())
    data[-4:] = bytes(b ^ 0xFF for b in data[-4:])
    target.write_bytes(bytes(data))
    import pytest

    from ragteam.errors import IndexUnusable

    with pytest.raises(IndexUnusable):
        load_index(ix)
    report = sync_folder(docs, ix, index=bm25)
    assert report.changes["unchanged"] == ["a.txt"]
    assert load_index(ix).retrieve("ferry", k=1)[0].id == "a.txt"


def test_control_characters_in_file_names_reach_the_terminal_escaped(tmp_path):
    """L3: an escape sequence in a file name was printed raw by `index sync` (it can clear the
    screen or recolour the output), and a newline split the one-line-per-file report."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "red\x1b[31m.txt").write_text("The ferry leaves at nine.")
    (docs / "two\nlines.txt").write_text("The harbour opens at six.")
    said = _sync(docs, "--out", tmp_path / "ix", "--retriever", "bm25")
    assert "\x1b" not in said and "red\\x1b[31m.txt" in said
    assert any(line.startswith("new") and "two\\nlines.txt" in line for line in said.splitlines())


class Racing:
    """Text read in this process (`isolated` False), after another program saved the file
    mid-conversion while `racing` is set."""

    name, version, suffixes, isolated = "racing", "1", (".race",), False
    racing = True

    def convert(self, path, settings):
        import os

        from ragteam.documents.text import TextConverter

        if self.racing:
            path.write_text("The toll is 9 crowns now, raised in May.")
            os.utime(path, ns=(1, 1))
        return TextConverter().convert(path, settings)


def test_a_file_changed_while_it_is_read_poisons_no_cache(tmp_path, monkeypatch):
    """M4: a file rewritten between its hash and its conversion stored the new text under the
    old bytes' key in the shared cache; another index of the old bytes then served it."""
    import pytest

    from ragteam.documents import CONVERTERS
    from ragteam.errors import InputError

    docs = tmp_path / "docs"
    docs.mkdir()
    page = docs / "a.race"
    page.write_text("The toll is 3 crowns.")
    bm25 = IndexSettings(retriever="bm25")
    CONVERTERS.register("racing", f"{__name__}:Racing")
    try:
        with pytest.raises(InputError, match="changed while it was read"):
            sync_folder(docs, tmp_path / "ix", index=bm25)
        monkeypatch.setattr(Racing, "racing", False)
        page.write_text("The toll is 3 crowns.")  # the old bytes again: not served from a bad cache
        sync_folder(docs, tmp_path / "other", index=bm25)
    finally:
        CONVERTERS.unregister("racing")
    assert [p.text for p in load_index(tmp_path / "other").passages] == ["The toll is 3 crowns."]


def test_a_path_over_the_system_limit_is_one_failed_entry_and_the_rest_is_read(tmp_path):
    """L1: one path longer than PATH_MAX stopped the whole sync with advice about disk space."""
    import os

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.txt").write_text("The ferry leaves at nine.")
    here = os.getcwd()
    try:
        os.chdir(docs)
        for _ in range(25):  # 25 x 200 characters: over 4,096
            os.mkdir("d" * 200)
            os.chdir("d" * 200)
        with open("x.txt", "w") as handle:
            handle.write("deep text")
    finally:
        os.chdir(here)
    report = sync_folder(docs, tmp_path / "ix", index=IndexSettings(retriever="bm25"))
    failed = [s for s in report.files if s.status == "failed"]
    assert len(failed) == 1 and "File name too long" in failed[0].reason
    assert [s.path for s in report.files if s.status == "read"] == ["ok.txt"]


def test_recorded_sync_settings_read_back_as_written_and_damage_is_named(tmp_path):
    import sqlite3

    import pytest

    from ragteam.errors import IndexUnusable
    from ragteam.retrieval.resync import recorded_settings

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nThe ferry leaves at nine.\n")
    ix = tmp_path / "ix"
    _sync(docs, "--out", ix, "--retriever", "bm25", "--passage-tokens", "48", "--html", "whole")
    sync, index, source = recorded_settings(ix)
    assert (sync.passage_tokens, sync.convert.html, index.retriever) == (48, "whole", "bm25")
    assert source == str(docs.resolve())
    db = sqlite3.connect(ix / "sources.sqlite")
    with db:
        raw = json.loads(db.execute("SELECT value FROM meta WHERE key='settings'").fetchone()[0])
        raw["sync"]["convert"] = "html=everything"
        db.execute("UPDATE meta SET value=? WHERE key='settings'", (json.dumps(raw),))
    db.close()
    with pytest.raises(IndexUnusable, match="damaged.*html=everything.*ragteam index build"):
        recorded_settings(ix)


def test_the_index_settings_are_recorded_once_in_the_manifest(tmp_path):
    import sqlite3

    from ragteam.retrieval.resync import recorded_settings

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nThe ferry leaves at nine.\n")
    ix = tmp_path / "ix"
    built = runner.invoke(app, ["index", "build", str(docs), "--out", str(ix), "--mmap"])
    assert built.exit_code == 0, built.output
    db = sqlite3.connect(ix / "sources.sqlite")
    raw = json.loads(db.execute("SELECT value FROM meta WHERE key='settings'").fetchone()[0])
    db.close()
    assert set(raw) == {"sync"}  # how files become passages; the index's own: its manifest
    assert recorded_settings(ix)[1] == IndexSettings(mmap=True)
    again = _sync(docs, "--out", ix, "--retriever", "bm25")
    assert "retriever: hybrid -> bm25" in " ".join(again.split()), again
    manifest = json.loads((ix / "manifest.json").read_text())
    assert (manifest["retriever"], manifest["params"]["mmap"]) == ("bm25", True)
    assert "1 unchanged" in _sync(docs, "--out", ix)
    assert recorded_settings(ix)[1] == IndexSettings(retriever="bm25", mmap=True)


def test_pipes_sockets_and_link_loops_are_named_for_what_they_are(tmp_path):
    """A FIFO was "the file is empty" (and reading one would wait for a writer for ever); a
    socket the same; a loop of links a "dangling link"."""
    import os
    import socket

    from ragteam.retrieval.scan import scan

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nThe ferry leaves at nine.\n")
    os.mkfifo(docs / "pipe.txt")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(docs / "sock.txt"))
        (docs / "one.txt").symlink_to(docs / "two.txt")
        (docs / "two.txt").symlink_to(docs / "one.txt")
        (docs / "gone.txt").symlink_to(docs / "nowhere.txt")
        found, left = scan(docs)
        said = {x.path: x.reason for x in left}
        report = sync_folder(docs, tmp_path / "ix", index=IndexSettings(retriever="bm25"))
    assert [f.path for f in found] == ["a.md"]
    assert "a named pipe (FIFO)" in said["pipe.txt"] and "a socket" in said["sock.txt"]
    assert "a loop of links" in said["one.txt"] and "a loop of links" in said["two.txt"]
    assert "a dangling link" in said["gone.txt"]
    assert [f.path for f in report.files if f.status == "read"] == ["a.md"]
