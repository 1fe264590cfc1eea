"""BM25's matrix built in bounded memory (ranges of terms, a spool on disk) is bm25s's own."""

from __future__ import annotations

import json
from array import array
from pathlib import Path

import bm25s
import numpy as np
import pytest
from bm25s.tokenization import Tokenized

from ragteam.retrieval import bm25, bm25_build
from ragteam.retrieval.bm25 import PARAMS, BM25Retriever, _tokenizer
from ragteam.retrieval.bm25_spool import Reuse
from ragteam.retrieval.passage_file import PassageFile, write_passages
from ragteam.types import Locator, Passage

_PARAMS = bm25_build.BM25Params(
    PARAMS["k1"], PARAMS["b"], bm25s.__version__, {"stemmer": "english"}
)
CORPUS = Path(__file__).parent.parent / "ragteam" / "data" / "demo_corpus.jsonl"


def _texts() -> list[str]:
    rows = [json.loads(line) for line in CORPUS.open(encoding="utf-8")]
    # an empty text and one of stop words only: documents with no terms at all
    return [f"{r['title']}\n{r['text']}" for r in rows] + ["", "the and of it"]


def _bm25s_files(texts: list[str], folder: Path) -> None:
    tokenizer = _tokenizer("english")
    stream = tokenizer.tokenize(iter(texts), return_as="stream", show_progress=False)
    ids = [array("i", doc) for doc in stream]
    model = bm25s.BM25(k1=PARAMS["k1"], b=PARAMS["b"], method=PARAMS["method"])
    model.index(Tokenized(ids=ids, vocab=tokenizer.get_vocab_dict()), show_progress=False)
    model.save(str(folder))


@pytest.mark.parametrize("small", [False, True])
def test_the_matrix_is_bm25s_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small: bool
) -> None:
    if small:  # many ranges, blocks and spool flushes over a small corpus
        monkeypatch.setattr(bm25_build, "RANGE_ENTRIES", 50)
        monkeypatch.setattr(bm25_build, "BLOCK_ENTRIES", 37)
        monkeypatch.setattr(bm25_build, "FLUSH_CHARS", 300)
    texts = _texts()
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    written = bm25_build.write_bm25(iter(texts), _tokenizer("english"), ours, _PARAMS)
    _bm25s_files(texts, theirs)
    assert written == bm25_build.Written(len(texts), len(texts))
    for name in ("data", "indices", "indptr"):
        mine = np.load(ours / f"{name}.csc.index.npy")
        other = np.load(theirs / f"{name}.csc.index.npy")
        assert mine.dtype == other.dtype and mine.shape == other.shape, name
        assert np.allclose(mine, other, rtol=1e-6, atol=0), name
    for name in ("params.index.json", "vocab.index.json"):
        assert json.loads((ours / name).read_text()) == json.loads((theirs / name).read_text())
    assert Reuse.of(ours, _PARAMS.tag) is not None, "the spool is kept for the next sync"
    assert Reuse.of(ours, {**_PARAMS.tag, "stemmer": "none"}) is None, "not under other settings"


def test_a_retriever_built_so_ranks_as_before(tmp_path: Path) -> None:
    passages = [Passage(f"p{n}", "", t) for n, t in enumerate(_texts())]
    found = BM25Retriever.build(passages).search("capital of the Halvard Archipelago", 3)
    _bm25s_files([p.text for p in passages], tmp_path)
    model = bm25s.BM25.load(str(tmp_path))
    tokenizer = _tokenizer("english")
    tokenizer.tokenize([p.text for p in passages], show_progress=False)  # the same vocabulary
    query = tokenizer.tokenize(
        ["capital of the Halvard Archipelago"],
        return_as="ids",
        update_vocab=False,
        show_progress=False,
    )
    docs, scores = model.retrieve(query, k=3, show_progress=False)
    assert [i for i, _ in found] == np.asarray(docs[0]).tolist()
    assert np.allclose([s for _, s in found], np.asarray(scores[0]), rtol=1e-6)


def test_a_passage_file_reads_back_what_was_streamed(tmp_path: Path) -> None:
    where = Locator("a.md", None, "", ("Intro",), None, 0, 5, "")
    passages = [
        Passage(f"d{n % 3}#{n}", "T", f"text {n}", f"d{n % 3}", locator=where) for n in range(7)
    ]
    written = write_passages(tmp_path / "p.jsonl", iter(passages))
    assert (written.count, written.documents) == (7, 3)
    stored = PassageFile(tmp_path / "p.jsonl", written.starts)
    assert len(stored) == 7 and list(stored) == passages
    assert stored[4] == passages[4] and stored[-1] == passages[-1] and stored[2:4] == passages[2:4]


def test_search_ranks_every_reached_passage_best_first_ties_by_place() -> None:
    """The top k are picked among the passages the query's terms reach (not by ranking every
    passage): the same as sorting all of bm25s's scores, ties broken by the earlier passage."""
    texts = _texts() + [_texts()[3]] * 2  # two copies of a passage: equal scores
    passages = [Passage(f"p{n}", "", t) for n, t in enumerate(texts)]
    retriever = BM25Retriever.build(passages)
    for query in ("capital of the Halvard Archipelago", "harbour", "the", "Quillan island town"):
        ids = retriever._tokenizer.tokenize(
            [query], return_as="ids", update_vocab=False, show_progress=False
        )
        scores = retriever._model.get_scores_from_ids(ids[0]) if ids[0] else np.zeros(len(texts))
        every = sorted((-s, i) for i, s in enumerate(scores) if s > 0)
        for k in (1, 3, 100):
            want = [(i, float(-s)) for s, i in every[:k]]
            assert retriever.search(query, k) == want, (query, k)


@pytest.mark.parametrize("stemmer", ["english", "none"])
def test_a_sync_tokenizes_only_new_texts_and_equals_a_clean_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stemmer: str
) -> None:
    """The terms of texts the replaced index held come from its spool; the index written so
    ranks and scores as a clean build of the same passages, and knows no word that only a
    removed passage held (its term is dropped, the ids closed up)."""
    monkeypatch.setattr(bm25_build, "FLUSH_CHARS", 400)  # many chunks, hits and misses mixed
    texts = _texts()
    first = [*texts, "Zorblatt harbour ledger of the Quillan pilots"]
    second = [
        texts[5] + " Amended by the harbour board.",  # changed
        *texts[:5],  # moved
        "Veltrane bridge tolls, new this year",  # new
        *texts[6:],  # kept; the Zorblatt passage is gone
    ]
    # the changed passage and the new one gone, a dropped word back
    third = [*[t for t in second[1:] if "Veltrane" not in t], "Zorblatt returns"]
    old, new, clean = tmp_path / "old", tmp_path / "new", tmp_path / "clean"
    assert bm25.write(_ps(first), old, stemmer).tokenized == len(first)
    assert bm25.write(_ps(second), new, stemmer, reuse_from=old).tokenized == 2
    bm25.write(_ps(second), clean, stemmer)
    _same_search(new, clean, second, stemmer, gone="Zorblatt")
    again, clean_again = tmp_path / "again", tmp_path / "clean_again"
    assert bm25.write(_ps(third), again, stemmer, reuse_from=new).tokenized == 1
    bm25.write(_ps(third), clean_again, stemmer)
    _same_search(again, clean_again, third, stemmer, gone="Veltrane")
    assert BM25Retriever.load(again, _ps(third), stemmer).knows("Zorblatt")
    other = "none" if stemmer == "english" else "english"
    assert bm25.write(_ps(third), tmp_path / "o", other, reuse_from=new).tokenized == len(third)


def _ps(texts: list[str]) -> list[Passage]:
    return [Passage(f"p{n}", "", t) for n, t in enumerate(texts)]


def _same_search(ours: Path, clean: Path, texts: list[str], stemmer: str, gone: str) -> None:
    mine = BM25Retriever.load(ours, _ps(texts), stemmer)
    theirs = BM25Retriever.load(clean, _ps(texts), stemmer)
    vocab = json.loads((ours / "bm25" / "vocab.index.json").read_text())
    want = json.loads((clean / "bm25" / "vocab.index.json").read_text())
    assert set(vocab) == set(want) and sorted(vocab.values()) == list(range(len(want)))
    for query in ("capital of the Halvard Archipelago", "harbour board", "Veltrane tolls", "the"):
        got, expected = mine.search(query, 5), theirs.search(query, 5)
        assert [i for i, _ in got] == [i for i, _ in expected], query
        assert np.allclose([s for _, s in got], [s for _, s in expected], rtol=1e-6), query
    assert not mine.knows(gone) and not theirs.knows(gone)
