"""Dense search over an index's segments: each segment's FAISS files searched with one query
vector, deep enough to pass its dead passages, and the live hits merged by score (ties in a
fresh index's order). A passage's score is its own cosine, whatever the other passages, so an
exact (flat) FAISS gives the ranking of an index written fresh; an approximate one (HNSW, from
50,000 passages) gives its own approximation, as a fresh one would another."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ragteam.errors import IndexUnusable
from ragteam.retrieval.dense import DenseRetriever, DenseSettings
from ragteam.retrieval.segments import SegmentedPassages


class SegmentedDense:
    """Dense search over live passages of several segments (numbered as `SegmentedPassages`)."""

    name = "dense"

    def __init__(self, passages: SegmentedPassages, parts: list[DenseRetriever | None]) -> None:
        self.passages = passages
        self._parts = parts
        self._dead = [int((~mask).sum()) for mask in passages.masks]
        self.encoder = next(p.encoder for p in parts if p is not None)

    @classmethod
    def load(
        cls,
        directory: Path,
        passages: SegmentedPassages,
        folders: list[str],
        params: list[dict[str, Any]],
        embedding_model: str | None,
        mmap: bool,
    ) -> SegmentedDense:
        """Each segment's FAISS files with its own recorded settings; one encoder for all."""
        parts: list[DenseRetriever | None] = []
        encoder = None
        for at, (folder, recorded) in enumerate(zip(folders, params, strict=True)):
            if not len(passages.masks[at]):  # a segment that only dropped files
                parts.append(None)
                continue
            settings = replace(DenseSettings.from_json(recorded), mmap=mmap)
            found = DenseRetriever.load(directory / folder, passages.parts[at], settings, encoder)
            if embedding_model != found.encoder.identity:
                raise IndexUnusable(
                    f"the index at {directory} was built with the embedding model "
                    f"{embedding_model}, but {found.encoder.identity} is installed"
                )
            encoder = found.encoder
            parts.append(found)
        return cls(passages, parts)

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        vector = self.encoder.encode([query])
        hits = []
        for at, part in enumerate(self._parts):
            if part is None:
                continue
            found = part.search_vector(vector, k + self._dead[at])
            local = np.asarray([i for i, _ in found], dtype=np.int64)
            score = np.asarray([s for _, s in found], dtype=np.float64)
            alive = self.passages.masks[at][local]
            hits.append((at, local[alive], score[alive]))
        return self.passages.ranked(hits, k)
