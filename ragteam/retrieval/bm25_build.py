"""BM25's score matrix built in bounded memory, in the files bm25s loads (`bm25s.BM25.load`).

bm25s builds its matrix from every document's token ids at once, then holds three arrays the
size of the matrix beside them: a folder of a million passages would take several GB. Here the
texts stream once through the tokenizer; each document's distinct terms and their counts are
spooled to a file beside the index, with the document frequencies and lengths kept (a few
bytes a document). The matrix (columns by term, as bm25s stores it) is then written a range
of terms at a time, each range read back from the spool: memory is that of one range and the
vocabulary, not of the folder. The scores are bm25s's `lucene` ones (Lucene's idf, Robertson's
term-frequency part), the same matrix its own `index` builds (tests/test_bm25_build.py)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

RANGE_ENTRIES = 1 << 23  # matrix entries written at a time (8M: 64 MB of scores and rows)
BLOCK_ENTRIES = 1 << 22  # spool entries read back at a time
FLUSH_ENTRIES = 1 << 20  # spool entries buffered before they are written


@dataclass
class _Spool:
    """Each document's distinct term ids and counts, on disk, in document order."""

    terms: Any  # an open binary file of int32 term ids
    counts: Any  # an open binary file of int32 counts
    df: np.ndarray  # documents holding each term (grown with the vocabulary)
    lengths: list[np.ndarray]  # tokens a document, per flushed chunk
    widths: list[np.ndarray]  # distinct terms a document, per flushed chunk

    def add(self, docs: list[np.ndarray]) -> None:
        """Spool a chunk of documents' token ids."""
        pairs = [np.unique(d, return_counts=True) for d in docs]
        terms = np.concatenate([t for t, _ in pairs]).astype(np.int32) if pairs else None
        if terms is None or not len(terms):
            self.lengths.append(np.array([len(d) for d in docs], dtype=np.int32))
            self.widths.append(np.zeros(len(docs), dtype=np.int32))
            return
        counts = np.concatenate([c for _, c in pairs]).astype(np.int32)
        if terms.max() >= len(self.df):
            grown = np.zeros(max(int(terms.max()) + 1, 2 * len(self.df)), dtype=np.int64)
            grown[: len(self.df)] = self.df
            self.df = grown
        self.df += np.bincount(terms, minlength=len(self.df))
        terms.tofile(self.terms)
        counts.tofile(self.counts)
        self.lengths.append(np.array([len(d) for d in docs], dtype=np.int32))
        self.widths.append(np.array([len(t) for t, _ in pairs], dtype=np.int32))


def write_bm25(
    texts: Iterable[str], tokenizer: Any, folder: Path, k1: float, b: float, version: str
) -> int:
    """Tokenize `texts` (a bm25s `Tokenizer`, its vocabulary grown as it goes) and write the
    BM25 files into `folder`; the number of documents."""
    folder.mkdir(parents=True, exist_ok=True)
    spool_path = folder / f".spool-{os.getpid()}"
    try:
        with open(f"{spool_path}.terms", "wb") as terms, open(f"{spool_path}.counts", "wb") as cnt:
            spool = _Spool(terms, cnt, np.zeros(1024, dtype=np.int64), [], [])
            docs: list[np.ndarray] = []
            buffered = 0
            stream = tokenizer.tokenize(texts, return_as="stream", show_progress=False)
            for ids in stream:
                docs.append(np.asarray(ids, dtype=np.int32))
                buffered += len(ids)
                if buffered >= FLUSH_ENTRIES:
                    spool.add(docs)
                    docs, buffered = [], 0
            spool.add(docs)
        vocab = tokenizer.get_vocab_dict()
        lengths = np.concatenate(spool.lengths) if spool.lengths else np.zeros(0, np.int32)
        widths = np.concatenate(spool.widths) if spool.widths else np.zeros(0, np.int32)
        df = np.zeros(len(vocab), dtype=np.int64)
        df[: min(len(vocab), len(spool.df))] = spool.df[: len(vocab)]
        _write_matrix(spool_path, folder, df, lengths, widths, k1, b)
    finally:
        for part in (".terms", ".counts"):
            Path(f"{spool_path}{part}").unlink(missing_ok=True)
    _write_params(folder, vocab, len(lengths), k1, b, version)
    return len(lengths)


def _write_matrix(
    spool: Path,
    folder: Path,
    df: np.ndarray,
    lengths: np.ndarray,
    widths: np.ndarray,
    k1: float,
    b: float,
) -> None:
    """The CSC matrix (columns: terms) from the spool, a range of terms at a time."""
    n_docs = len(lengths)
    indptr = np.zeros(len(df) + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    nnz = int(indptr[-1])
    idf = np.log(1 + (n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
    average = float(lengths.mean()) if n_docs else 0.0
    # each document's part of a score's denominator (Robertson's term-frequency component)
    norm = k1 * ((1 - b) + b * lengths / average) if average else np.full(n_docs, k1)
    starts = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(widths, out=starts[1:])
    np.save(folder / "indptr.csc.index.npy", indptr)
    # appended a range at a time (the ranges come in the matrix's order), never mapped: the
    # matrix is on disk, not in this process's memory
    with (
        _npy(folder / "data.csc.index.npy", np.float32, nnz) as data,
        _npy(folder / "indices.csc.index.npy", np.int32, nnz) as rows,
    ):
        first = 0
        while first < len(df):
            last = int(np.searchsorted(indptr, indptr[first] + RANGE_ENTRIES, side="right")) - 1
            last = min(max(last, first + 1), len(df))
            scores, docs = _range(spool, indptr, idf, norm, starts, first, last)
            scores.tofile(data)
            docs.tofile(rows)
            first = last


@contextlib.contextmanager
def _npy(path: Path, dtype: type, size: int) -> Iterator[BinaryIO]:
    """A `.npy` file of `size` items of `dtype`, its header written, open to append them."""
    with path.open("wb") as handle:
        header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False}
        np.lib.format.write_array_header_1_0(handle, {**header, "shape": (size,)})
        start = handle.tell()
        yield handle
        if handle.tell() - start != size * np.dtype(dtype).itemsize:
            raise RuntimeError(f"{path} holds another number of entries than its header says")


def _range(
    spool: Path,
    indptr: np.ndarray,
    idf: np.ndarray,
    norm: np.ndarray,
    starts: np.ndarray,
    first: int,
    last: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Scores and document numbers of the terms `first` to `last` (excluded), in CSC order:
    by term, then by document (the spool is in document order, and a stable sort keeps it)."""
    base = int(indptr[first])
    size = int(indptr[last]) - base
    scores, docs = np.empty(size, dtype=np.float32), np.empty(size, dtype=np.int32)
    fill = (indptr[first:last] - base).copy()
    total = int(starts[-1])
    for at in range(0, total, BLOCK_ENTRIES):
        count = min(BLOCK_ENTRIES, total - at)
        terms = np.fromfile(f"{spool}.terms", dtype=np.int32, count=count, offset=4 * at)
        keep = (terms >= first) & (terms < last)
        if not keep.any():
            continue
        where = np.flatnonzero(keep)
        terms = terms[where] - first
        tf = np.fromfile(f"{spool}.counts", dtype=np.int32, count=count, offset=4 * at)[where]
        doc = np.searchsorted(starts, where + at, side="right") - 1
        score = idf[terms + first] * (tf / (norm[doc] + tf))
        order = np.argsort(terms, kind="stable")
        terms, doc, score = terms[order], doc[order], score[order]
        heads, sizes = np.unique(terms, return_index=True, return_counts=True)[1:]
        place = fill[terms] + np.arange(len(terms)) - np.repeat(heads, sizes)
        fill[terms[heads]] += sizes
        scores[place], docs[place] = score, doc
    return scores, docs


def _write_params(
    folder: Path, vocab: dict[str, int], n_docs: int, k1: float, b: float, version: str
) -> None:
    """bm25s's vocabulary and parameter files, as its `save` writes them."""
    (folder / "vocab.index.json").write_text(json.dumps(vocab, ensure_ascii=False), "utf-8")
    params = {
        "k1": k1,
        "b": b,
        "delta": 0.5,
        "method": "lucene",
        "idf_method": "lucene",
        "dtype": "float32",
        "int_dtype": "int32",
        "num_docs": n_docs,
        "version": version,
        "backend": "numpy",
    }
    (folder / "params.index.json").write_text(json.dumps(params, indent=4), "utf-8")
