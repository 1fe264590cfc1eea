"""The built-in retriever kinds: `bm25` (bm25s) and `dense` (an encoder + FAISS), as the
index builds, records and loads them (`ragteam.retrieval.kinds`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragteam.errors import IndexUnusable
from ragteam.retrieval.bm25 import PARAMS, STEMMER, BM25Retriever
from ragteam.retrieval.bm25 import write as write_bm25
from ragteam.retrieval.dense import DenseRetriever, DenseSettings, chosen_kind, passage_text
from ragteam.retrieval.encoder_registry import make_encoder
from ragteam.retrieval.kinds import BuildJob, Built, IndexSettings
from ragteam.retrieval.manifest import Manifest
from ragteam.types import Passage

# from this many passages BM25's score matrix is mapped from disk, not read into memory, unless
# the index was built or is loaded with an explicit --mmap choice: at a million passages the
# load is no slower (2.5-2.8 s against 2.8-3.1), searches take the same time (p95 4.5 ms) and
# each process holds 110 MB of its own rather than 468 (the matrix's pages are the page cache's,
# shared by every `serve --workers` process); at 5,000 the two are alike (docs/benchmarks.md
# §61). 100,000 passages is about 36 MB of matrix a process.
BM25_MAP_FROM = 100_000


def bm25_mapped(manifest: Manifest, passages: int) -> tuple[bool, str]:
    """Whether BM25's matrix is mapped for an index of `passages`, and why (`index info`)."""
    if manifest.mmap or manifest.mmap_asked:
        return manifest.mmap, "as asked (--mmap)" if manifest.mmap else "as asked"
    if passages >= BM25_MAP_FROM:
        return True, f"auto: {passages:,} passages, from {BM25_MAP_FROM:,} mapped"
    return False, f"auto: {passages:,} passages, under {BM25_MAP_FROM:,}"


class BM25Kind:
    """The `bm25` retriever kind: files in `bm25/`, its stemmer and parameters recorded."""

    name = "bm25"

    def build(self, passages: Sequence[Passage], directory: Path, job: BuildJob) -> Built:
        if job.progress:
            job.progress("bm25", 0, 1)
        written = write_bm25(passages, directory, job.settings.bm25_stemmer, job.previous)
        job.stats["tokenized"] = job.stats.get("tokenized", 0) + written.tokenized
        if job.progress:
            job.progress("bm25", 1, 1)
        return Built({**PARAMS, "stemmer": job.settings.bm25_stemmer})

    def load(
        self, directory: Path, passages: list[Passage], params: dict[str, Any], manifest: Manifest
    ) -> BM25Retriever:
        mapped, _ = bm25_mapped(manifest, len(passages))
        return BM25Retriever.load(directory, passages, stemmer_of(params), mmap=mapped)

    def restore(self, params: dict[str, Any], settings: IndexSettings) -> IndexSettings:
        return replace(settings, bm25_stemmer=stemmer_of(params))

    def rebuild_flags(self, params: dict[str, Any]) -> str:
        stemmer = params.get("stemmer", STEMMER)
        return "" if stemmer == STEMMER else f" --bm25-stemmer {stemmer or 'none'}"


def stemmer_of(params: dict[str, Any]) -> str:
    stemmer = params.get("stemmer", STEMMER)
    if not isinstance(stemmer, str):
        raise ValueError(f"params.bm25.stemmer is {stemmer!r}, not a name")
    return stemmer


class DenseKind:
    """The `dense` retriever kind: FAISS files (`dense.faiss` or `dense-NNN.faiss`), its
    `DenseSettings` and the encoder's identity recorded (another encoder is refused)."""

    name = "dense"

    def build(self, passages: Sequence[Passage], directory: Path, job: BuildJob) -> Built:
        progress = job.progress
        report = (lambda done, total: progress("embed", done, total)) if progress else None
        settings = job.settings.dense
        if job.encode is None:
            built = DenseRetriever.build(passages, report, settings)
        else:  # the vectors are computed elsewhere (Ray)
            vectors = job.encode([passage_text(p) for p in passages], settings.encoder, report)
            encoder = make_encoder(settings.encoder)
            built = DenseRetriever.from_vectors(passages, vectors, encoder, settings)
        built.save(directory)
        kind_built, why = chosen_kind(settings.kind, len(passages))
        params = {**settings.to_json(), "built": {"kind": kind_built, "why": why}}
        return Built(params, embedding_model=built.encoder.identity)

    def load(
        self, directory: Path, passages: list[Passage], params: dict[str, Any], manifest: Manifest
    ) -> DenseRetriever:
        settings = replace(DenseSettings.from_json(params), mmap=manifest.mmap)
        found = DenseRetriever.load(directory, passages, settings)
        if manifest.embedding_model != found.encoder.identity:
            raise IndexUnusable(
                f"the index at {directory} was built with the embedding model "
                f"{manifest.embedding_model}, but {found.encoder.identity} is installed"
            )
        return found

    def restore(self, params: dict[str, Any], settings: IndexSettings) -> IndexSettings:
        return replace(settings, dense=DenseSettings.from_json(params))

    def rebuild_flags(self, params: dict[str, Any]) -> str:
        encoder = params.get("encoder") if isinstance(params.get("encoder"), dict) else {}
        flags = ""
        if encoder.get("backend", "torch") not in ("torch", "server"):
            flags += f" --encoder {encoder['backend']}"
        if params.get("kind", "flat") != DenseSettings().kind:
            flags += f" --index-type {params['kind']}"
        if params.get("shards", 1) != 1:
            flags += f" --shards {params['shards']}"
        return flags


BM25 = BM25Kind()
DENSE = DenseKind()
