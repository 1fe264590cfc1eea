"""A log or a CSV saved as text (hardening round 3, H3): one 'paragraph' of thousands of lines,
or one line of thousands of words with no sentence end, is cut on its lines, then on words,
without counting the whole of it: every passage is within the budget, an exact span of the
text, and together they hold every word in order."""

from __future__ import annotations

from ragteam.documents.base import Unit
from ragteam.documents.chunking import chunk
from ragteam.retrieval.embed_cache import token_counter
from ragteam.retrieval.encoders import EncoderSpec


def _check(text, budget=64):
    count, _limit, _name = token_counter(EncoderSpec("torch"))
    seen: list[int] = []
    real = count

    def counting(piece):  # records the longest text ever counted at once
        seen.append(len(piece))
        return real(piece)

    pieces = chunk([Unit(text)], budget, counting, overlap=0)
    assert all(count(p.text) <= budget for p in pieces)
    assert all(text[p.start : p.end] == p.text for p in pieces)
    assert " ".join(" ".join(p.text.split()) for p in pieces) == " ".join(text.split())
    return pieces, max(seen)


def test_a_log_without_blank_lines_is_cut_on_its_lines_never_counted_whole():
    log = "".join(
        f"2026-11-26T12:00:{i % 60:02d} INFO worker-{i % 7} batch {i} ok\n" for i in range(3000)
    )
    pieces, longest = _check(log)
    assert len(pieces) > 100 and longest < 64 * 64 + 1  # never the whole 150 KB at once


def test_one_endless_line_is_cut_into_word_windows():
    line = " ".join(f"cell{i}" for i in range(20000))  # no newline, no sentence end
    pieces, longest = _check(line)
    assert len(pieces) > 100 and longest < 1000


def test_a_file_over_its_formats_size_cap_is_skipped_before_it_is_read(tmp_path, monkeypatch):
    """H4: a huge file (here 3 MB against a cap lowered to 2) is reported skipped with the
    reason, never hashed nor read, and the rest of the folder is indexed."""
    from ragteam.documents.text import TextConverter
    from ragteam.retrieval import changes as changes_module
    from ragteam.retrieval import sync_folder
    from ragteam.retrieval.index import IndexSettings

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "small.txt").write_text("The ferry leaves at nine.")
    with (docs / "huge.txt").open("wb") as handle:
        handle.truncate(3 * 2**20)
    monkeypatch.setattr(TextConverter, "max_mb", 2)
    hashed = []
    real = changes_module.sha256_of
    monkeypatch.setattr(changes_module, "sha256_of", lambda p: hashed.append(p.name) or real(p))
    report = sync_folder(docs, tmp_path / "ix", index=IndexSettings(retriever="bm25"))
    status = {s.path: (s.status, s.reason) for s in report.files}
    assert status["huge.txt"][0] == "skipped" and "over 2 MB" in status["huge.txt"][1]
    assert status["small.txt"][0] == "read" and "huge.txt" not in hashed


def test_the_token_count_is_the_embedding_models_own():
    """Passages are cut by the tokenizer run without transformers (no torch in a BM25 sync);
    its counts are those of the tokenizer transformers loads for the model, long texts too."""
    from transformers import AutoTokenizer

    from ragteam.retrieval.encoders import embedding_model_dir

    count, limit, _name = token_counter(EncoderSpec("torch"))
    model = AutoTokenizer.from_pretrained(str(embedding_model_dir()))
    texts = [
        "",
        "The ferry leaves Quillan at nine.",
        "émigré naïve 東京 ¶ %(asctime)s --max-line-length=100 # noqa: E501",
        " ".join(f"word{i}" for i in range(2000)),  # far past the model's input limit
    ]
    for text in texts:
        assert count(text) == len(model(text, add_special_tokens=False)["input_ids"])
    assert count(texts[3]) > limit


def test_a_table_is_cut_between_its_rows_never_inside_one():
    """A paragraph of table rows too long for one passage is cut on its rows (a passage cut
    inside "a4 | 8.3 x 11.7 | 210 x 297 | 595 x 842" loses the cell it ends in); a paragraph
    of prose with line breaks is still cut on its sentences."""
    rows = "\n".join(
        f"size{i} | {i}.3 x {i}1.7 in | {i}10 x 2{i}7 mm | 5{i}5 x 8{i}2 pt | note {i}"
        for i in range(60)
    )
    pieces, _ = _check("Name | Inches | mm | Points | Notes\n" + rows)
    assert len(pieces) > 3
    assert all(
        p.text.startswith(("Name", "size")) and p.text.endswith(tuple("0123456789")) for p in pieces
    )
    prose = "\n".join(f"Line {i} of a wrapped paragraph that goes on" for i in range(40)) + "."
    cut = chunk([Unit(prose)], 64, token_counter(EncoderSpec("torch"))[0], overlap=0)
    assert len(cut) > 1 and any(not p.text.startswith("Line") for p in cut)


def test_another_cut_cuts_every_file_again_its_cached_conversion_not_reused(tmp_path, monkeypatch):
    """The pieces are cached with a file's conversion: a sync under another chunking version
    cuts the unchanged file again (its cached pieces were cut the old way), once."""
    from ragteam.retrieval import changes, sync, sync_folder
    from ragteam.retrieval.index import IndexSettings

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "sizes.md").write_text(
        "# Sizes\n\n" + "\n".join(f"a{n} | {n} x {n + 1} |" for n in range(9))
    )
    cut: list[int] = []
    real = changes.chunk
    monkeypatch.setattr(changes, "chunk", lambda *a, **k: cut.append(1) or real(*a, **k))
    settings = IndexSettings(retriever="bm25")
    assert sync_folder(docs, tmp_path / "ix", index=settings).converted == 1 and len(cut) == 1
    assert sync_folder(docs, tmp_path / "ix", index=settings).converted == 0 and len(cut) == 1
    (tmp_path / "again").mkdir()
    sync_folder(docs, tmp_path / "again", index=settings)  # the cache's pieces: not cut again
    assert len(cut) == 1
    for module in (changes, sync):
        monkeypatch.setattr(module, "CHUNKING_VERSION", 999)
    report = sync_folder(docs, tmp_path / "ix", index=settings)
    assert report.converted == 1 and len(cut) == 2 and report.count("read") == 1
