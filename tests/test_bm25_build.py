"""BM25's matrix built in bounded memory (ranges of terms, a spool on disk) is bm25s's own."""

from __future__ import annotations

import json
from array import array
from pathlib import Path

import bm25s
import numpy as np
import pytest
from bm25s.tokenization import Tokenized

from ragteam.retrieval import bm25_build
from ragteam.retrieval.bm25 import PARAMS, BM25Retriever, _tokenizer
from ragteam.retrieval.passage_file import PassageFile, write_passages
from ragteam.types import Locator, Passage

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
        monkeypatch.setattr(bm25_build, "FLUSH_ENTRIES", 29)
    texts = _texts()
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    count = bm25_build.write_bm25(
        iter(texts), _tokenizer("english"), ours, PARAMS["k1"], PARAMS["b"], bm25s.__version__
    )
    _bm25s_files(texts, theirs)
    assert count == len(texts)
    for name in ("data", "indices", "indptr"):
        mine = np.load(ours / f"{name}.csc.index.npy")
        other = np.load(theirs / f"{name}.csc.index.npy")
        assert mine.dtype == other.dtype and mine.shape == other.shape, name
        assert np.allclose(mine, other, rtol=1e-6, atol=0), name
    for name in ("params.index.json", "vocab.index.json"):
        assert json.loads((ours / name).read_text()) == json.loads((theirs / name).read_text())
    assert not list(ours.glob(".spool-*")), "the spool is removed"


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
