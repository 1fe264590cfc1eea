"""Passage budgets in the embedding model's own tokens, and embeddings through the sync cache
(only texts the cache has never seen with this encoder are encoded, in batches that are
stored as they finish, so a killed sync keeps what it had embedded)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ragteam.common.once import loaded_once
from ragteam.documents.chunking import TokenCount
from ragteam.retrieval.encoder_registry import make_encoder
from ragteam.retrieval.encoders import EncoderSpec, embedding_model_dir, max_seq_length
from ragteam.retrieval.kinds import BatchedEncode, RemoteEncode
from ragteam.retrieval.sources import SyncCache, text_key

BATCH = 256
LOOKUP = 2000  # cached vectors read from the cache at a time
SPILL_BYTES = 64 << 20  # vectors beyond this many bytes are gathered in a file, not in memory
LOCAL = ("torch", "onnx", "onnx-int8")


@loaded_once(maxsize=1)
def _wordpiece() -> Any:
    """The embedding model's tokenizer, run by `tokenizers` (what transformers runs it with)
    without transformers: a BM25 sync never imports torch (about 200 MB)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(embedding_model_dir() / "tokenizer.json"))
    tokenizer.no_truncation()  # long texts are counted whole
    tokenizer.no_padding()
    return tokenizer


def token_counter(spec: EncoderSpec) -> tuple[TokenCount, int, str]:
    """How to count a text's tokens for this encoder, its input limit, and the counter's name
    (part of the chunking settings: another counter cuts other passages). The tokenizer is
    loaded at the first count, so a sync that converts nothing never loads it."""
    if spec.backend in LOCAL:
        limit = max_seq_length(embedding_model_dir()) - 2  # [CLS] and [SEP]

        def count(text: str) -> int:
            return len(_wordpiece().encode(text, add_special_tokens=False).ids)

        return count, limit, "all-MiniLM-L6-v2 wordpiece"
    return (lambda text: max(1, len(text.split()) * 4 // 3)), 512, "words x 4/3"


def cached_encode(
    cache: SyncCache, inner: RemoteEncode | None, stats: dict[str, int], spill: Path | None = None
):
    """A `RemoteEncode` that asks the cache first; `stats['embedded']` counts new texts.
    Every batch is stored as it finishes: here, or on a cluster (`BatchedEncode`, given all
    the missing texts at once so that its actors share them). The vectors go straight into
    the one array returned, LOOKUP cached ones at a time: no second copy of them all. With
    `spill`, a folder, an array over SPILL_BYTES is a memory map of a nameless file there
    (deleted when the array goes): FAISS then copies the vectors from disk, and the process
    holds them once, not twice (about 460 MB less at 300k passages)."""

    def encode(texts: list[str], spec: EncoderSpec, report: Any) -> np.ndarray:
        encoder = make_encoder(spec)
        places: dict[str, list[int]] = {}
        for row, text in enumerate(texts):
            places.setdefault(text_key(text), []).append(row)
        filled = _Filled(len(texts), spill)
        missing: dict[str, str] = {}
        unique = sorted(places)
        for start in range(0, len(unique), LOOKUP):
            chunk = unique[start : start + LOOKUP]
            known = cache.vectors(encoder.identity, chunk)
            for key in chunk:
                if key in known:
                    filled.put(places[key], known[key])
                else:
                    missing[key] = texts[places[key][0]]
        todo = list(missing.items())
        done = 0
        for batch, vectors in _batches(todo, spec, inner, encoder):
            vectors = np.asarray(vectors, dtype=np.float32)
            cache.put_vectors(encoder.identity, [k for k, _ in batch], vectors)
            for (key, _), vector in zip(batch, vectors, strict=True):
                filled.put(places[key], vector)
            done += len(batch)
            if report:
                report(done, len(todo))
        stats["embedded"] = stats.get("embedded", 0) + len(todo)
        return filled.array

    return encode


class _Filled:
    """The returned vectors, one row per text, made at the first vector (its size): in memory,
    or mapped from a nameless file in `spill` when over SPILL_BYTES."""

    def __init__(self, rows: int, spill: Path | None) -> None:
        self.rows, self.spill = rows, spill
        self.array: np.ndarray = np.zeros((rows, 0), dtype=np.float32)

    def put(self, rows: list[int], vector: np.ndarray) -> None:
        if self.array.shape[1] == 0:  # the first vector: its size is the encoder's
            shape = (self.rows, len(vector))
            if self.spill is not None and self.rows * len(vector) * 4 > SPILL_BYTES:
                self.spill.mkdir(parents=True, exist_ok=True)
                with tempfile.TemporaryFile(dir=self.spill, prefix="vectors-") as handle:
                    self.array = np.memmap(handle, dtype=np.float32, mode="w+", shape=shape)
            else:
                self.array = np.empty(shape, dtype=np.float32)
        self.array[rows] = vector


def _batches(
    todo: list[tuple[str, str]], spec: EncoderSpec, inner: RemoteEncode | None, encoder: Any
) -> Iterator[tuple[list[tuple[str, str]], Any]]:
    """(key, text) batches of `todo` with their vectors, as each finishes."""
    if isinstance(inner, BatchedEncode):
        for rows, vectors in inner.batches([t for _, t in todo], spec):
            yield [todo[int(r)] for r in rows], vectors
        return
    for start in range(0, len(todo), BATCH):
        batch = todo[start : start + BATCH]
        texts = [t for _, t in batch]
        yield batch, (inner(texts, spec, None) if inner else encoder.encode(texts))
