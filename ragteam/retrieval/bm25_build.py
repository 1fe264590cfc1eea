"""BM25's score matrix built in bounded memory, in the files bm25s loads (`bm25s.BM25.load`).

bm25s builds its matrix from every document's token ids at once, then holds three arrays the
size of the matrix beside them: a folder of a million passages would take several GB. Here the
texts stream once through the tokenizer; each document's distinct terms and their counts are
spooled to files kept with the index (`ragteam.retrieval.bm25_spool`: the next sync tokenizes
only the texts they do not hold), with the document frequencies and lengths kept (a few
bytes a document). The matrix (columns by term, as bm25s stores it) is then written a range
of terms at a time, each range read back from the spool: memory is that of one range and the
vocabulary, not of the folder. The scores are bm25s's `lucene` ones (Lucene's idf, Robertson's
term-frequency part), the same matrix its own `index` builds (tests/test_bm25_build.py)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from ragteam.retrieval.bm25_spool import COUNTS, TERMS, Reuse, Spool, compact, digests, finish

# each entry's term count, beside its score: what a segmented index scores with global
# statistics (`ragteam.retrieval.segments`)
TF_FILE = "tf.csc.index.npy"
RANGE_ENTRIES = 1 << 23  # matrix entries written at a time (8M: 64 MB of scores and rows)
BLOCK_ENTRIES = 1 << 22  # spool entries read back at a time
FLUSH_CHARS = 1 << 22  # characters of text tokenized and spooled at a time
FLUSH_DOCS = 1 << 14  # at most so many texts at a time


@dataclass(frozen=True)
class Written:
    """What `write_bm25` wrote: documents, and how many of them were tokenized (the others'
    terms came from the index it replaces)."""

    documents: int
    tokenized: int


def write_bm25(
    texts: Iterable[str],
    tokenizer: Any,
    folder: Path,
    params: BM25Params,
    reuse_from: Path | None = None,
) -> Written:
    """Tokenize `texts` (a bm25s `Tokenizer`, its vocabulary grown as it goes) and write the
    BM25 files and the spool into `folder`. `reuse_from`: a previous index's BM25 folder whose
    spool (if made with the same tokenizer settings) gives the terms of the texts it holds."""
    folder.mkdir(parents=True, exist_ok=True)
    reuse = Reuse.of(reuse_from, params.tag) if reuse_from is not None else None
    if reuse is not None and not reuse.lend_vocabulary(tokenizer):
        reuse = None
    with open(folder / TERMS, "wb") as terms, open(folder / COUNTS, "wb") as counts:
        spool = Spool(terms, counts, np.zeros(1024, dtype=np.int64))
        tokenized = sum(_spool_chunk(chunk, tokenizer, reuse, spool) for chunk in _chunks(texts))
    table = spool.table()
    vocab_size = len(tokenizer.get_vocab_dict())
    df = np.zeros(vocab_size, dtype=np.int64)
    df[: min(vocab_size, len(spool.df))] = spool.df[:vocab_size]
    df = compact(folder, df, tokenizer)
    starts = np.zeros(len(table) + 1, dtype=np.int64)
    np.cumsum(table["width"], out=starts[1:])
    _write_matrix(folder, df, table["length"], starts, params.k1, params.b)
    finish(folder, table, params.tag)
    _write_params(folder, tokenizer.get_vocab_dict(), len(table), params)
    return Written(len(table), tokenized)


@dataclass(frozen=True)
class BM25Params:
    """The scoring parameters and bm25s's version, and the tokenizer's settings (`tag`: a
    spool made under other ones is not reused)."""

    k1: float
    b: float
    version: str
    tag: dict[str, Any]


def _chunks(texts: Iterable[str]) -> Iterator[list[str]]:
    """The texts in lists of about FLUSH_CHARS characters (at most FLUSH_DOCS texts)."""
    chunk: list[str] = []
    size = 0
    for text in texts:
        chunk.append(text)
        size += len(text)
        if size >= FLUSH_CHARS or len(chunk) >= FLUSH_DOCS:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def _spool_chunk(chunk: list[str], tokenizer: Any, reuse: Reuse | None, spool: Spool) -> int:
    """Spool a chunk of texts, each one's terms taken from `reuse` where it holds the text,
    else tokenized; how many were tokenized."""
    keys = digests(chunk)
    found = reuse.find(keys) if reuse is not None else np.full(len(chunk), -1, dtype=np.int64)
    hit = found >= 0
    old = iter(reuse.rows(found[hit]) if reuse is not None and hit.any() else [])
    todo = [t for t, h in zip(chunk, hit.tolist(), strict=True) if not h]
    fresh = iter(tokenizer.tokenize(todo, return_as="ids", update_vocab=True, show_progress=False))
    rows = []
    for h in hit.tolist():
        if h:
            rows.append(next(old))
            continue
        ids = np.asarray(next(fresh), dtype=np.int32)
        terms, counts = np.unique(ids, return_counts=True)
        rows.append((terms, counts, len(ids)))
    spool.add(keys, rows)
    return len(todo)


def _write_matrix(
    folder: Path, df: np.ndarray, lengths: np.ndarray, starts: np.ndarray, k1: float, b: float
) -> None:
    """The CSC matrix (columns: terms) from the spool in `folder`, a range of terms at a time
    (`starts`: where each document's entries begin in the spool, and their end)."""
    n_docs = len(lengths)
    indptr = np.zeros(len(df) + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    nnz = int(indptr[-1])
    idf = np.log(1 + (n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
    average = float(lengths.mean()) if n_docs else 0.0
    # each document's part of a score's denominator (Robertson's term-frequency component)
    norm = k1 * ((1 - b) + b * lengths / average) if average else np.full(n_docs, k1)
    np.save(folder / "indptr.csc.index.npy", indptr)
    # appended a range at a time (the ranges come in the matrix's order), never mapped: the
    # matrix is on disk, not in this process's memory
    with (
        _npy(folder / "data.csc.index.npy", np.float32, nnz) as data,
        _npy(folder / "indices.csc.index.npy", np.int32, nnz) as rows,
        _npy(folder / TF_FILE, np.int32, nnz) as counts,
    ):
        first = 0
        while first < len(df):
            last = int(np.searchsorted(indptr, indptr[first] + RANGE_ENTRIES, side="right")) - 1
            last = min(max(last, first + 1), len(df))
            scores, docs, tf = _range(folder, indptr, idf, norm, starts, first, last)
            scores.tofile(data)
            docs.tofile(rows)
            tf.tofile(counts)
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
    folder: Path,
    indptr: np.ndarray,
    idf: np.ndarray,
    norm: np.ndarray,
    starts: np.ndarray,
    first: int,
    last: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores, document numbers and term counts of the terms `first` to `last` (excluded), in
    CSC order: by term, then by document (the spool is in document order, and a stable sort
    keeps it)."""
    base = int(indptr[first])
    size = int(indptr[last]) - base
    scores, docs = np.empty(size, dtype=np.float32), np.empty(size, dtype=np.int32)
    counts = np.empty(size, dtype=np.int32)
    fill = (indptr[first:last] - base).copy()
    total = int(starts[-1])
    for at in range(0, total, BLOCK_ENTRIES):
        count = min(BLOCK_ENTRIES, total - at)
        terms = np.fromfile(folder / TERMS, dtype=np.int32, count=count, offset=4 * at)
        keep = (terms >= first) & (terms < last)
        if not keep.any():
            continue
        where = np.flatnonzero(keep)
        terms = terms[where] - first
        tf = np.fromfile(folder / COUNTS, dtype=np.int32, count=count, offset=4 * at)[where]
        doc = np.searchsorted(starts, where + at, side="right") - 1
        score = idf[terms + first] * (tf / (norm[doc] + tf))
        order = np.argsort(terms, kind="stable")
        terms, doc, score, tf = terms[order], doc[order], score[order], tf[order]
        heads, sizes = np.unique(terms, return_index=True, return_counts=True)[1:]
        place = fill[terms] + np.arange(len(terms)) - np.repeat(heads, sizes)
        fill[terms[heads]] += sizes
        scores[place], docs[place], counts[place] = score, doc, tf
    return scores, docs, counts


def _write_params(folder: Path, vocab: dict[str, int], n_docs: int, params: BM25Params) -> None:
    """bm25s's vocabulary and parameter files, as its `save` writes them."""
    (folder / "vocab.index.json").write_text(json.dumps(vocab, ensure_ascii=False), "utf-8")
    params = {
        "k1": params.k1,
        "b": params.b,
        "delta": 0.5,
        "method": "lucene",
        "idf_method": "lucene",
        "dtype": "float32",
        "int_dtype": "int32",
        "num_docs": n_docs,
        "version": params.version,
        "backend": "numpy",
    }
    (folder / "params.index.json").write_text(json.dumps(params, indent=4), "utf-8")
