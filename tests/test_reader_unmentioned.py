"""A question that names something no passage mentions: the names found (word pieces and the
index's BM25 vocabulary), and what the default answer does with them, over a real page."""

from __future__ import annotations

import pytest

from ragteam.reader.unmentioned import named, unmentioned

PIECES = {"webp": 2, "av1": 2, "jmap_session_url": 5, "mutt": 2, "png": 2}


def _pieces(word: str) -> int:
    return PIECES.get(word, 1)


def test_a_name_is_a_word_the_reader_holds_only_in_pieces_numbers_left_out():
    question = "Does ffmpeg 7.1 encode WebP, AV1 or webp images at 2048 pixels?"
    assert named(question, _pieces) == ["WebP", "AV1"]  # each once, as written, no 2048
    assert named("What is the default timeout?", _pieces) == []


def test_only_the_names_no_passage_holds_are_unmentioned():
    said = {"webp": True, "av1": False}
    question = "Can WebP and AV1 be converted?"
    assert unmentioned(question, _pieces, lambda w: said[w.lower()]) == ("AV1",)
    # an index that cannot tell (no vocabulary): nothing is said to be unmentioned
    assert unmentioned(question, _pieces, lambda w: None) == ()


@pytest.fixture(scope="module")
def page_index(tmp_path_factory):
    from ragteam.retrieval import sync_folder
    from ragteam.retrieval.index import IndexSettings

    root = tmp_path_factory.mktemp("unmentioned")
    docs = root / "docs"
    docs.mkdir()
    (docs / "images.html").write_text(
        "<html><head><title>Images</title></head><body><h1>Image formats</h1>"
        "<p>The converter reads PNG and JPEG images. It writes PNG images at 8 bits a "
        "channel, and JPEG images at a quality of 90 by default.</p>"
        "<h2>Limits</h2><p>Images wider than 16384 pixels are refused.</p></body></html>",
        encoding="utf-8",
    )
    sync_folder(docs, root / "ix", index=IndexSettings(retriever="bm25"))
    from ragteam.retrieval import load_index

    return load_index(root / "ix")


def test_bm25_knows_the_words_its_passages_hold_stemmed(page_index):
    assert page_index.mentions("PNG") is True
    assert page_index.mentions("refusing") is True  # "refused", stemmed alike
    assert page_index.mentions("the") is True  # a stop word: not indexed, not unknown
    assert page_index.mentions("WebP") is False


def test_an_answer_about_something_no_passage_mentions_is_not_given_as_found(page_index):
    from ragteam import answer

    asked = answer("What quality does the converter use for WebP images?", index=page_index)
    assert asked.unmentioned == ("WebP",)
    assert asked.evidence and not asked.evidence[0].answerable
    assert asked.found_by_reader() is None
    label = asked.grounding()
    assert label.level == "not_supported" and "'WebP'" in label.message
    assert any(s.meta.get("event") == "unmentioned" for s in asked.trace.steps)
    withheld = answer(
        "What quality does the converter use for WebP images?", index=page_index, abstain=True
    )
    assert withheld.support is not None and withheld.support.withheld
    # the same question about what the page does mention is answered as found
    found = answer("What quality does the converter use for JPEG images?", index=page_index)
    assert found.unmentioned == () and found.found_by_reader() is not None
    assert "90" in found.text
    off = answer(
        "What quality does the converter use for WebP images?",
        index=page_index,
        options={"mentions": False},
    )
    assert off.unmentioned == ()
    assert not any(s.meta.get("event") == "unmentioned" for s in off.trace.steps)
