"""Sparse retrieval with bm25s (English stop words, Snowball stemming by default)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragteam.types import Passage

if TYPE_CHECKING:
    from ragteam.retrieval.bm25_build import Written

PARAMS = {"k1": 1.5, "b": 0.75, "method": "lucene", "stopwords": "en"}
STEMMER = "english"  # a Snowball language, or "none"


def _tokenizer(stemmer: str):  # noqa: ANN202 - bm25s has no public type for this
    import bm25s
    import Stemmer

    if stemmer != "none" and stemmer not in Stemmer.algorithms():
        from ragteam.errors import InputError

        raise InputError(f"unknown stemmer '{stemmer}'; use none or one of {Stemmer.algorithms()}")
    stem = None if stemmer == "none" else Stemmer.Stemmer(stemmer).stemWord
    return bm25s.tokenization.Tokenizer(stemmer=stem, stopwords=PARAMS["stopwords"])


def _text(p: Passage) -> str:
    """What BM25 indexes: title, section path (documents), text."""
    head = [p.title] if p.title else []
    if p.locator is not None and p.locator.section:
        head.append(" ".join(p.locator.section))
    return "\n".join([*head, p.text])


def write(
    passages: Iterable[Passage],
    directory: Path,
    stemmer: str = STEMMER,
    reuse_from: Path | None = None,
) -> Written:
    """BM25's files for `passages` in `directory / "bm25"`, built in bounded memory
    (`ragteam.retrieval.bm25_build`): the texts are read once, as they come. `reuse_from`: the
    index this one replaces, whose kept terms spare tokenizing the texts it holds."""
    import bm25s

    from ragteam.retrieval.bm25_build import BM25Params, write_bm25

    tokenizer = _tokenizer(stemmer)
    folder = directory / "bm25"
    texts = (_text(p) for p in passages)
    tag = {"stemmer": stemmer, "stopwords": PARAMS["stopwords"], "bm25s": bm25s.__version__}
    params = BM25Params(PARAMS["k1"], PARAMS["b"], bm25s.__version__, tag)
    old = reuse_from / "bm25" if reuse_from is not None else None
    written = write_bm25(texts, tokenizer, folder, params, old)
    tokenizer.save_vocab(str(folder))
    tokenizer.save_stopwords(str(folder))
    return written


class BM25Retriever:
    name = "bm25"

    def __init__(
        self, passages: list[Passage], model: object, tokenizer: object, mapped: bool = False
    ) -> None:
        self.passages = passages
        self._model = model
        self._tokenizer = tokenizer
        self.mapped = mapped  # the score matrix is mapped from disk, not held in memory

    @classmethod
    def build(cls, passages: list[Passage], stemmer: str = STEMMER) -> BM25Retriever:
        """A retriever of `passages` in memory (what `write` writes, loaded back)."""
        with tempfile.TemporaryDirectory(prefix="ragteam-bm25-") as folder:
            write(passages, Path(folder), stemmer)
            return cls.load(Path(folder), passages, stemmer)

    @classmethod
    def load(
        cls, directory: Path, passages: list[Passage], stemmer: str = STEMMER, mmap: bool = False
    ) -> BM25Retriever:
        """`mmap`: map the score matrix from disk (bm25s's memory-mapped mode)."""
        import bm25s

        model = bm25s.BM25.load(str(directory / "bm25"), mmap=mmap)
        tokenizer = _tokenizer(stemmer)
        tokenizer.load_vocab(str(directory / "bm25"))
        tokenizer.load_stopwords(str(directory / "bm25"))
        return cls(passages, model, tokenizer, mapped=mmap)

    def knows(self, word: str) -> bool:
        """Whether some passage holds `word` (one word as BM25 splits text, stemmed as it is
        indexed); a stop word, which BM25 does not index, is known."""
        low = word.lower()
        if low in (self._tokenizer.stopwords or ()):
            return True
        ids = self._tokenizer.tokenize(
            [low], return_as="ids", update_vocab=False, allow_empty=False, show_progress=False
        )
        return bool(ids and ids[0])

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """(passage index, score) pairs, best first (ties: the earlier passage first). The
        scores are bm25s's; the top k are picked here among the passages the query's terms
        reach (bm25s's `retrieve` ranks every passage: 250 ms a query at 1M, this 12 ms)."""
        ids = self._tokenizer.tokenize(
            [query], return_as="ids", update_vocab=False, show_progress=False
        )
        if not ids or not ids[0]:
            return []
        scores = self._model.get_scores_from_ids(ids[0])
        hit = np.flatnonzero(scores > 0)
        if len(hit) > k:  # those at least as good as the k-th (its ties too), then ordered
            cut = np.partition(scores[hit], len(hit) - k)[len(hit) - k]
            hit = hit[scores[hit] >= cut]
        best = hit[np.lexsort((hit, -scores[hit]))][:k]
        return [(int(i), float(scores[i])) for i in best]
