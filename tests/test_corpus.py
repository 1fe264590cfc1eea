import json

import pytest

from ragteam.errors import InputError
from ragteam.retrieval.corpus import Document, load_passages, read_documents, split_passages


def test_short_documents_stay_whole_and_keep_their_id():
    [p] = split_passages(Document("d1", "T", "one two three"), words=100)
    assert (p.id, p.doc_id, p.title, p.text) == ("d1", "d1", "T", "one two three")


def test_long_documents_split_evenly_with_stable_ids():
    text = " ".join(f"w{i}" for i in range(250))
    parts = split_passages(Document("d", "T", text), words=100)
    assert [p.id for p in parts] == ["d#0", "d#1"]
    assert all(p.doc_id == "d" for p in parts)
    assert " ".join(p.text for p in parts) == text
    assert split_passages(Document("d", "T", text), words=100) == parts
    assert len(split_passages(Document("d", "T", text), words=0)) == 1


def test_jsonl_and_folder_sources(tmp_path):
    src = tmp_path / "c.jsonl"
    src.write_text(
        json.dumps({"id": "a", "title": "A", "text": "alpha"})
        + "\n\n"
        + json.dumps({"id": "b", "text": "beta"})
        + "\n"
    )
    assert [d.id for d in read_documents(src)] == ["a", "b"]
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "one.md").write_text("# First Title\nbody text")
    (folder / "sub" / "two.txt").write_text("plain words")
    (folder / "skip.bin").write_bytes(b"\0\1")
    with pytest.raises(InputError, match="index sync"):  # folders are read by converters
        list(read_documents(folder))


def test_malformed_jsonl_names_file_and_line(tmp_path):
    src = tmp_path / "bad.jsonl"
    src.write_text('{"id": "a", "text": "ok"}\n{"id": "b", "text": \n')
    with pytest.raises(InputError, match=r"bad\.jsonl:2"):
        load_passages(src)
    src.write_text('{"id": "a", "title": "no text"}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:1.*'text'"):
        load_passages(src)


def test_duplicate_ids_and_missing_source(tmp_path):
    src = tmp_path / "dup.jsonl"
    src.write_text('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n')
    with pytest.raises(InputError, match="occurs twice"):
        load_passages(src)
    with pytest.raises(InputError, match="no corpus"):
        load_passages(tmp_path / "nope.jsonl")
