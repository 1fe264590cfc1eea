import json

import pytest

from ragteam.errors import IndexUnusable, InputError
from ragteam.retrieval import build_index, load_index
from ragteam.retrieval.corpus import load_passages, read_documents
from ragteam.retrieval.sources import read_sources
from ragteam.types import Citation


def _corpus(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_corpus_is_read_by_its_converter_and_cut_like_any_file(tmp_path):
    """A JSONL row is a document: kept whole when short, with its id, title and a locator
    naming the file and the row; a long one cut to the token budget as `ID#N`, each passage an
    exact span of the row's text, every one of them the row's."""
    long = " ".join(f"The lamp number {i} was lit at dusk." for i in range(60))
    src = _corpus(
        tmp_path / "c.jsonl",
        [
            {"id": "d1", "title": "T", "text": "one   two\nthree"},
            {"id": "d2", "text": long},
            {"id": "d3", "title": "E", "text": "   "},
        ],
    )
    build_index(src, tmp_path / "ix", retriever="bm25")
    passages = load_index(tmp_path / "ix").passages
    first = passages[0]
    assert (first.id, first.doc_id, first.title, first.text) == ("d1", "d1", "T", "one two three")
    assert first.locator.describe() == "c.jsonl #d1" and first.locator.section == ()
    assert Citation.of(first).locator == "c.jsonl #d1 (T)"  # the row's title, for a person
    parts = [p for p in passages if p.doc_id == "d2"]
    assert [p.id for p in parts] == [f"d2#{n}" for n in range(len(parts))] and len(parts) > 2
    assert all(p.text in long and p.title == "" for p in parts)
    assert {p.doc_id for p in passages} == {"d1", "d2"}  # a row with no text has no passage
    [file] = read_sources(tmp_path / "ix")[0].values()  # and the sync says which
    assert file.notes == ["1 rows with no text, so no passage: d3"]
    build_index(src, tmp_path / "whole", retriever="bm25", passage_words=0)
    whole = load_index(tmp_path / "whole").passages
    assert [p.id for p in whole] == ["d1", "d2"] and whole[1].text == long


def test_a_corpus_in_a_folder_names_its_rows_and_a_clash_is_refused(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("# Ferries\n\nThe ferry leaves at nine.\n")
    _corpus(docs / "a.jsonl", [{"id": "r1", "title": "Tolls", "text": "The toll is 3 crowns."}])
    build_index(docs, tmp_path / "ix", retriever="bm25")
    assert sorted(p.id for p in load_index(tmp_path / "ix").passages) == ["notes.md", "r1"]
    _corpus(docs / "b.jsonl", [{"id": "r1", "text": "Another row one."}])
    with pytest.raises(InputError, match="'r1' comes from document 'r1' of a.jsonl and from"):
        build_index(docs, tmp_path / "ix2", retriever="bm25")


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
    with pytest.raises(InputError, match=r"bad\.jsonl: line 2: not valid JSON"):
        build_index(src, tmp_path / "ix", retriever="bm25")  # nothing half-read is indexed
    assert not (tmp_path / "ix").exists()
    src.write_text('{"id": "a", "title": "no text"}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:1.*'text'"):
        load_passages(src)


def test_duplicate_ids_and_missing_source(tmp_path):
    src = tmp_path / "dup.jsonl"
    src.write_text('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n')
    with pytest.raises(InputError, match="occurs twice"):
        load_passages(src)
    with pytest.raises(InputError, match=r"dup\.jsonl: line 2: document id 'a' occurs twice"):
        build_index(src, tmp_path / "ix", retriever="bm25")  # the converter reads rows alike
    with pytest.raises(InputError, match="no corpus"):
        load_passages(tmp_path / "nope.jsonl")


def test_a_synced_corpus_re_embeds_only_the_rows_that_changed(tmp_path):
    from typer.testing import CliRunner

    from ragteam.cli import app
    from ragteam.retrieval import sync_folder
    from ragteam.retrieval.index import IndexSettings

    rows = [
        {"id": f"r{n}", "title": f"Row {n}", "text": f"The ferry {n} leaves at {n}."}
        for n in range(3)
    ]
    src = _corpus(tmp_path / "c.jsonl", rows)
    first = sync_folder(src, tmp_path / "ix", index=IndexSettings(retriever="hybrid"))
    assert first.embedded == 3
    rows[1]["text"] = "The ferry 1 now leaves at noon."
    _corpus(src, rows)
    again = CliRunner().invoke(app, ["index", "sync", str(src), "--out", str(tmp_path / "ix")])
    assert again.exit_code == 0, again.output
    assert "changed  c.jsonl" in again.output and "1 passages embedded" in again.output
    index = load_index(tmp_path / "ix")  # the file it was synced from matches it again
    assert [p.id for p in index.passages] == ["r0", "r1", "r2"]
    assert index.passage("r1").text == rows[1]["text"]
    assert index.retrieve("ferry noon", 1)[0].id == "r1"


def test_one_document_of_any_format_is_indexed_alone(tmp_path):
    page = tmp_path / "notes.md"
    page.write_text("# Ferries\n\nThe ferry leaves at nine.\n")
    build_index(page, tmp_path / "ix", retriever="bm25")
    [passage] = load_index(tmp_path / "ix").passages
    assert (passage.id, passage.locator.describe()) == ("notes.md", "notes.md § Ferries")
    page.write_text("# Ferries\n\nThe ferry leaves at ten.\n")  # a changed file: stale
    with pytest.raises(IndexUnusable, match="changed after the index"):
        load_index(tmp_path / "ix")
