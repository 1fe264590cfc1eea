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
