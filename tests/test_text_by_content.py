"""Plain text by what it is, not only by its suffix (issue 87): configuration files, README and
INSTALL files without a suffix and man pages rendered for a terminal are read as text when
their bytes are text, and the notes say so; binary files are skipped as before, saying why."""

from __future__ import annotations

import pytest

from ragteam.documents import ConvertSettings, converter_for
from ragteam.documents.base import looks_like_text
from ragteam.retrieval import load_index, sync_folder
from ragteam.retrieval.index import IndexSettings

SQUID = """#	WELCOME TO SQUID 6.6
#	----------------------------

#  TAG: cache_mem	(bytes)
#	Ideal amount of memory to be used for In-Transit objects,
#	Hot Objects and Negative-Cached objects.
#Default:
# cache_mem 256 MB

#  TAG: maximum_object_size_in_memory	(bytes)
#	Objects greater than this size will not be attempted to kept in
#	the memory cache.
#Default:
# maximum_object_size_in_memory 512 KB
"""


def _man_rendered(text: str) -> str:
    """`text` as man(1) renders bold for a terminal: each letter struck twice."""
    return "".join(f"{c}\b{c}" if c.isalpha() else c for c in text)


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "squid.conf").write_text(SQUID, encoding="utf-8")
    (root / "README").write_text("Lanterns\n\nThe lantern keeper lights the pier at dusk.\n")
    (root / "harbour.ini").write_bytes(
        "[fees]\nmooring = 12 kronor per n\xe4tt\n".encode("latin-1")
    )
    (root / "tar.1").write_text(
        _man_rendered("NAME")
        + "\n       tar - an archiving utility\n\n"
        + _man_rendered("DESCRIPTION")
        + "\n       GNU tar saves many files together.\n"
    )
    (root / "CHANGES").write_bytes(b"")  # empty: failed as empty, like any empty document
    (root / "photo.heic").write_bytes(b"\x00\x00\x00\x18ftypheic" + bytes(range(256)) * 8)
    (root / "tool.bin").write_bytes(b"\x7fELF\x02\x01\x01" + b"\x01\x02\x03\x04" * 600)
    return root


def test_text_files_of_any_suffix_are_read_binary_ones_skipped(folder, tmp_path):
    report = sync_folder(folder, tmp_path / "ix", index=IndexSettings(retriever="bm25"))
    state = {s.path: s for s in report.files}
    for name in ("squid.conf", "README", "harbour.ini", "tar.1"):
        assert state[name].status == "read", (name, state[name].reason)
        assert any("read as plain text" in n for n in state[name].notes), state[name].notes
    assert "files without a suffix" in state["README"].notes[0]
    assert state["CHANGES"].status == "failed" and "empty" in state["CHANGES"].reason
    for name in ("photo.heic", "tool.bin"):
        assert state[name].status == "skipped" and "not text" in state[name].reason
    index = load_index(tmp_path / "ix")
    found = index.retrieve("cache_mem default memory", k=1)[0]
    assert found.doc_id == "squid.conf" and "cache_mem 256 MB" in found.text
    texts = {p.doc_id: p.text for p in index.passages}
    assert "DESCRIPTION" in texts["tar.1"] and "\b" not in texts["tar.1"]  # overstrike read
    assert "per nätt" in texts["harbour.ini"]  # Latin-1 bytes are text too


def test_the_sniff_tells_text_from_binary(tmp_path):
    cases = {
        "utf8.conf": "pier = 3\nnäs = ö\n".encode(),
        "utf16.cfg": "\ufeffkey = value\n".encode("utf-16"),
        "nul.dat": b"almost text\x00 but a NUL",
        "controls.dat": bytes([1, 2, 3, 4, 5, 6]) * 50 + b"words" * 10,
        "empty": b"",
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    seen = {name: looks_like_text(tmp_path / name) for name in cases}
    assert seen == {
        "utf8.conf": True,
        "utf16.cfg": True,
        "nul.dat": False,
        "controls.dat": False,
        "empty": True,  # read as text, then failed as empty, like any empty document
    }
    converter = converter_for(tmp_path / "utf8.conf")
    assert converter is not None and converter.name == "text"
    assert "näs = ö" in converter.convert(tmp_path / "utf8.conf", ConvertSettings()).units[0].text
    assert converter_for(tmp_path / "nul.dat") is None


def test_an_unchanged_file_is_not_sniffed_again(folder, tmp_path, monkeypatch):
    """A second sync keeps what the first found of each file of another suffix (read as text,
    or skipped as not text) without reading its bytes again; a changed one is sniffed anew."""
    import ragteam.documents.base as base

    settings = IndexSettings(retriever="bm25")
    sync_folder(folder, tmp_path / "ix", index=settings)
    sniffed: list[str] = []
    real = base.looks_like_text
    monkeypatch.setattr(base, "looks_like_text", lambda p: sniffed.append(p.name) or real(p))
    again = sync_folder(folder, tmp_path / "ix", index=settings)
    assert sniffed == ["CHANGES"]  # a failed file is tried again: only it
    state = {s.path: s.status for s in again.files}
    assert state["squid.conf"] == "read" and state["photo.heic"] == "skipped"
    (folder / "photo.heic").write_bytes(b"now a caption of the photo, in plain words\n")
    changed = sync_folder(folder, tmp_path / "ix", index=settings)
    assert sorted(sniffed) == ["CHANGES", "CHANGES", "photo.heic"]
    assert {s.path: s.status for s in changed.files}["photo.heic"] == "read"
