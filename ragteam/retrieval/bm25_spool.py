"""Each passage's BM25 terms, kept on disk beside the score matrix, so that the next sync
tokenizes only the passages whose text it has not seen.

The spool holds, in passage order, every passage's distinct term ids and their counts (two
files of int32), and a table of the passages: the digest of the text BM25 read (BLAKE2b, 128
bits), its length in tokens and its number of distinct terms. A sync hands the index it replaces
to the new build (`Reuse`): a passage whose text's digest is there takes its terms from there,
under the same term ids (the old vocabulary is loaded and only grows); the others are tokenized.
Terms left in no passage are then dropped and the ids closed up (`compact`), so the vocabulary
is that of a clean build and a word no passage holds any more is unknown again. Only the order
of the ids may differ from a clean build's; the scores are the same."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

TERMS, COUNTS, DOCS, INFO = "terms.spool.i32", "counts.spool.i32", "docs.spool.npy", "spool.json"
FORMAT = 1
DOC_FIELDS = np.dtype([("hi", "<u8"), ("lo", "<u8"), ("length", "<i4"), ("width", "<i4")])
COMPACT_BLOCK = 1 << 22  # spool entries renumbered at a time


def digests(texts: list[str]) -> np.ndarray:
    """Two uint64 a text: its BLAKE2b-128 digest."""
    raw = b"".join(hashlib.blake2b(t.encode("utf-8"), digest_size=16).digest() for t in texts)
    return np.frombuffer(raw, dtype="<u8").reshape(-1, 2)


@dataclass
class Spool:
    """The spool being written: the two entry files open, the documents' rows and the document
    frequencies (grown with the vocabulary) in memory."""

    terms: BinaryIO
    counts: BinaryIO
    df: np.ndarray
    docs: list[np.ndarray] = field(default_factory=list)

    def add(self, keys: np.ndarray, rows: list[tuple[np.ndarray, np.ndarray, int]]) -> None:
        """Append documents: their digests and (distinct term ids, counts, length) each."""
        table = np.zeros(len(rows), dtype=DOC_FIELDS)
        if len(rows):
            table["hi"], table["lo"] = keys[:, 0], keys[:, 1]
            table["length"] = [length for _, _, length in rows]
            table["width"] = [len(t) for t, _, _ in rows]
        self.docs.append(table)
        if not rows or not table["width"].sum():
            return
        terms = np.concatenate([t for t, _, _ in rows]).astype(np.int32)
        counts = np.concatenate([c for _, c, _ in rows]).astype(np.int32)
        if terms.max() >= len(self.df):
            grown = np.zeros(max(int(terms.max()) + 1, 2 * len(self.df)), dtype=np.int64)
            grown[: len(self.df)] = self.df
            self.df = grown
        self.df += np.bincount(terms, minlength=len(self.df))
        terms.tofile(self.terms)
        counts.tofile(self.counts)

    def table(self) -> np.ndarray:
        return np.concatenate(self.docs) if self.docs else np.zeros(0, dtype=DOC_FIELDS)


def finish(folder: Path, table: np.ndarray, tag: dict[str, Any]) -> None:
    """Write the documents' table and what the spool was made with (`tag`: the tokenizer's
    settings; another tag is not reused)."""
    np.save(folder / DOCS, table)
    info = {"format": FORMAT, "tag": tag, "documents": len(table)}
    info["entries"] = int(table["width"].sum()) if len(table) else 0
    (folder / INFO).write_text(json.dumps(info), "utf-8")


class Reuse:
    """A previous index's spool, read for the passages whose text it holds."""

    def __init__(self, folder: Path, table: np.ndarray) -> None:
        self.folder = folder
        self._table = table
        self._starts = np.zeros(len(table) + 1, dtype=np.int64)
        np.cumsum(table["width"], out=self._starts[1:])
        self._order = np.argsort(table["hi"], kind="stable")
        self._sorted_hi = table["hi"][self._order]

    @classmethod
    def of(cls, folder: Path, tag: dict[str, Any]) -> Reuse | None:
        """The spool in `folder`, if one made with `tag` is there whole; else None (the
        passages are then all tokenized)."""
        try:
            info = json.loads((folder / INFO).read_text("utf-8"))
            if info.get("format") != FORMAT or info.get("tag") != tag:
                return None
            table = np.load(folder / DOCS, allow_pickle=False)
        except (OSError, ValueError):
            return None
        if table.dtype != DOC_FIELDS or len(table) != info.get("documents"):
            return None
        entries = int(table["width"].sum())
        for name in (TERMS, COUNTS):
            path = folder / name
            if entries != info.get("entries") or path.stat().st_size != 4 * entries:
                return None
        return cls(folder, table)

    def lend_vocabulary(self, tokenizer: Any) -> bool:
        """Load the vocabulary the spool's term ids belong to into `tokenizer` (bm25s's
        `vocab.tokenizer.json`); False, the tokenizer left empty, when it cannot be read."""
        try:
            tokenizer.load_vocab(str(self.folder))
        except (OSError, ValueError, KeyError):
            tokenizer.reset_vocab()
            return False
        return True

    def find(self, keys: np.ndarray) -> np.ndarray:
        """The old document holding each digest's text, or -1."""
        if not len(self._sorted_hi):
            return np.full(len(keys), -1, dtype=np.int64)
        at = np.searchsorted(self._sorted_hi, keys[:, 0])
        at = np.minimum(at, len(self._sorted_hi) - 1)
        doc = self._order[at]
        same = (self._table["hi"][doc] == keys[:, 0]) & (self._table["lo"][doc] == keys[:, 1])
        return np.where(same, doc, -1).astype(np.int64)

    def rows(self, docs: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """The (term ids, counts, length) of old documents `docs`, read a run of consecutive
        documents at a time (read, not mapped: the old spool's pages are not held)."""
        widths = self._table["width"][docs].astype(np.int64)
        terms, counts = [], []
        breaks = np.flatnonzero(np.diff(docs) != 1) + 1
        for run in np.split(docs, breaks) if len(docs) else []:
            lo, hi = int(self._starts[run[0]]), int(self._starts[run[-1] + 1])
            terms.append(_read(self.folder / TERMS, lo, hi))
            counts.append(_read(self.folder / COUNTS, lo, hi))
        cuts = np.cumsum(widths)[:-1]
        every_term = np.concatenate(terms) if terms else np.zeros(0, np.int32)
        every_count = np.concatenate(counts) if counts else np.zeros(0, np.int32)
        lengths = self._table["length"][docs].tolist()
        return list(
            zip(np.split(every_term, cuts), np.split(every_count, cuts), lengths, strict=True)
        )


def _read(path: Path, lo: int, hi: int) -> np.ndarray:
    """Entries `lo` to `hi` (excluded) of a spool file of int32."""
    return np.fromfile(path, dtype=np.int32, count=hi - lo, offset=4 * lo)


def compact(folder: Path, df: np.ndarray, tokenizer: Any) -> np.ndarray:
    """Drop the terms no document holds (the empty word, which a clean build always has,
    stays), renumbering the spool and the tokenizer's vocabulary; the document frequencies of
    the terms kept."""
    vocab = tokenizer.get_vocab_dict()
    keep = df > 0
    empty = vocab.get("")
    if empty is not None:
        keep[empty] = True
    if keep.all():
        return df
    new = np.cumsum(keep) - 1
    path, entries = folder / TERMS, (folder / TERMS).stat().st_size // 4
    if entries:
        terms = np.memmap(path, dtype=np.int32, mode="r+", shape=(entries,))
        for at in range(0, entries, COMPACT_BLOCK):
            terms[at : at + COMPACT_BLOCK] = new[terms[at : at + COMPACT_BLOCK]]
        terms.flush()
        del terms
    _renumber(tokenizer, keep, new)
    return df[keep]


def _renumber(tokenizer: Any, keep: np.ndarray, new: np.ndarray) -> None:
    """The tokenizer's dictionaries (bm25s's `word_to_id`, and with a stemmer `stem_to_sid`
    and `word_to_stem`) without the dropped ids, the others renumbered."""
    alive = keep.tolist()
    ids = new.tolist()
    tokenizer.word_to_id = {w: ids[i] for w, i in tokenizer.word_to_id.items() if alive[i]}
    if tokenizer.stemmer is not None:
        stems = {s: ids[i] for s, i in tokenizer.stem_to_sid.items() if alive[i]}
        tokenizer.stem_to_sid = stems
        tokenizer.word_to_stem = {w: s for w, s in tokenizer.word_to_stem.items() if s in stems}
