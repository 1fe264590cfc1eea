"""BM25 over an index's segments, scored with statistics over every live passage.

Each segment keeps its own BM25 files (`ragteam.retrieval.bm25_build`), and with them each
entry's term count (`tf.csc.index.npy`) and each passage's length (the spool's table). A query
is scored here as bm25s scores it over one index written fresh from the live passages: the
document count, average length and each term's document frequency are those of the live
passages (a dead passage counts nowhere), each entry's part is computed in float32 as
`bm25_build` writes it, and the parts are added per passage in the query's term order, so a
passage's score is the very float a fresh index gives it."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragteam.retrieval.bm25 import PARAMS, _tokenizer
from ragteam.retrieval.bm25_build import TF_FILE
from ragteam.retrieval.bm25_spool import DOCS
from ragteam.retrieval.segments import SegmentedPassages


@dataclass(frozen=True)
class _Part:
    """One segment's BM25: its vocabulary, its CSC matrix of term counts and its lengths."""

    vocab: dict[str, int]
    indptr: np.ndarray
    indices: np.ndarray
    tf: np.ndarray
    lengths: np.ndarray
    live: np.ndarray  # bool, a passage

    @classmethod
    def load(cls, folder: Path, live: np.ndarray) -> _Part:
        bm25 = folder / "bm25"
        if not len(live):  # a segment that only dropped files
            empty = np.zeros(0, dtype=np.int64)
            return cls({}, np.zeros(1, dtype=np.int64), _EMPTY, _EMPTY, empty, live)
        vocab = _vocabulary(bm25)
        lengths = np.load(bm25 / DOCS, mmap_mode="r")["length"].astype(np.int64)
        return cls(
            vocab,
            np.load(bm25 / "indptr.csc.index.npy", mmap_mode="r"),
            np.load(bm25 / "indices.csc.index.npy", mmap_mode="r"),
            np.load(bm25 / TF_FILE, mmap_mode="r"),
            lengths,
            live,
        )

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """The live passages holding `term` (their numbers here) and its counts in them."""
        at = self.vocab.get(term)
        if at is None:
            return _EMPTY, _EMPTY
        start, end = int(self.indptr[at]), int(self.indptr[at + 1])
        docs = np.asarray(self.indices[start:end])
        counts = np.asarray(self.tf[start:end])
        keep = self.live[docs]
        return (docs, counts) if keep.all() else (docs[keep], counts[keep])


_EMPTY = np.zeros(0, dtype=np.int32)
VOCABULARY_KEPT = 100_000  # query words a kept tokenizer holds before it is made anew


def _vocabulary(bm25: Path) -> dict[str, int]:
    import json

    return dict(json.loads((bm25 / "vocab.index.json").read_text("utf-8")))


class SegmentedBM25:
    """BM25 over live passages of several segments (`search` numbers them as
    `SegmentedPassages` does)."""

    name = "bm25"

    def __init__(
        self, passages: SegmentedPassages, parts: list[_Part], stemmer: str, params: dict[str, Any]
    ) -> None:
        self.passages = passages
        self._parts = parts
        self._stemmer = stemmer
        self._words: Any = None  # the tokenizer `_terms` keeps
        self._lock = threading.Lock()
        self._k1 = float(params.get("k1", PARAMS["k1"]))
        self._b = float(params.get("b", PARAMS["b"]))
        self._count = sum(int(p.live.sum()) for p in parts)
        total = sum(int(p.lengths[p.live].sum()) for p in parts)
        self._average = total / self._count if self._count else 0.0

    @classmethod
    def load(
        cls,
        directory: Path,
        passages: SegmentedPassages,
        folders: list[str],
        stemmer: str,
        params: dict[str, Any],
    ) -> SegmentedBM25:
        parts = [
            _Part.load(directory / folder, mask)
            for folder, mask in zip(folders, passages.masks, strict=True)
        ]
        return cls(passages, parts, stemmer, params)

    def _terms(self, text: str) -> list[str]:
        """`text`'s terms as BM25 indexes them (stemmed, stop words out), in order. One
        tokenizer is kept (making one costs 5 ms a query); the words it has seen are its
        vocabulary, so it is made anew past VOCABULARY_KEPT of them."""
        with self._lock:
            if self._words is None or len(self._words.get_vocab_dict()) > VOCABULARY_KEPT:
                self._words = _tokenizer(self._stemmer)
            tokens = self._words.tokenize(
                [text], return_as="string", update_vocab=True, show_progress=False
            )
        return [t for t in (tokens[0] if tokens else []) if t]

    def knows(self, word: str) -> bool:
        """Whether some live passage holds `word` (a stop word is known)."""
        low = word.lower()
        terms = self._terms(low)
        if not terms:
            return True
        return any(len(part.postings(terms[0])[0]) for part in self._parts)

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """(live passage number, score) pairs, best first (ties: in a fresh index's order)."""
        if not self._count:
            return []
        scores = [np.zeros(len(p.lengths), dtype=np.float32) for p in self._parts]
        norms: list[np.ndarray | None] = [None] * len(self._parts)
        for term in self._terms(query):
            found = [part.postings(term) for part in self._parts]
            df = sum(len(docs) for docs, _ in found)
            if not df:
                continue
            idf = np.float32(np.log(1 + (self._count - df + 0.5) / (df + 0.5)))
            for at, (docs, counts) in enumerate(found):
                if not len(docs):
                    continue
                if norms[at] is None:
                    norms[at] = self._norm(self._parts[at].lengths)
                tf = counts.astype(np.float64)
                part = (idf * (tf / (norms[at][docs] + tf))).astype(np.float32)
                np.add.at(scores[at], docs, part)
        return self._best(scores, k)

    def _norm(self, lengths: np.ndarray) -> np.ndarray:
        k1, b = self._k1, self._b
        if not self._average:
            return np.full(len(lengths), k1)
        return k1 * ((1 - b) + b * lengths / self._average)

    def _best(self, scores: list[np.ndarray], k: int) -> list[tuple[int, float]]:
        hits = []
        for at, part_scores in enumerate(scores):
            hit = np.flatnonzero(part_scores > 0)
            if len(hit) > k:
                cut = np.partition(part_scores[hit], len(hit) - k)[len(hit) - k]
                hit = hit[part_scores[hit] >= cut]
            hits.append((at, hit, part_scores[hit]))
        return self.passages.ranked(hits, k)
