"""Dense retrieval: an encoder (MiniLM in PyTorch or ONNX, or a server) + FAISS inner product.

The FAISS index is flat (exact), HNSW (a graph) or IVF-PQ (compressed, trained on a sample),
optionally split into shards searched one by one and merged, optionally memory-mapped."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path, PurePath
from typing import Any

import numpy as np

from ragteam.errors import IndexUnusable, InputError, UnknownName
from ragteam.retrieval.encoder_registry import make_encoder, parse_encoder
from ragteam.retrieval.encoders import EncodeProgress, Encoder, EncoderSpec
from ragteam.settings import flag, group
from ragteam.types import Passage

INDEX_KINDS = ("auto", "flat", "hnsw", "ivfpq")
# `auto` builds HNSW from this many passages (flat below): exact search of one query costs
# about 0.2 ms per 1,000 passages on the 2 cores measured (5 ms at 26k, 20 at 100k, 57 at 300k;
# docs/benchmarks.md §65, which corrects §56's 5.6 ms per 100,000), HNSW 0.2 ms at 1M with
# 99.8% of the exact top 10 (.996 on HotpotQA's vectors), for build time (114 s at 1M) and 18%
# more memory (§13c): from 50,000 on, exact search alone would take 10 ms and more
HNSW_FROM = 50_000


def _encoder(given: dict[str, Any]) -> EncoderSpec:
    """The encoder the command line names (`--encoder`, `--embed-url`, `--embed-batch`)."""
    spec = EncoderSpec()
    return parse_encoder(
        given.get("backend", spec.backend),
        given.get("base_url", ""),
        given.get("batch", spec.batch),
    )


@dataclass(frozen=True)
class DenseSettings:
    """How the dense part of an index is built and searched (recorded in the manifest)."""

    encoder: EncoderSpec = group(EncoderSpec, make=_encoder)
    kind: str = flag(  # auto: by the number of passages (`chosen_kind`)
        "auto",
        f"FAISS index: {' | '.join(INDEX_KINDS)} (auto: flat, HNSW from {HNSW_FROM:,} passages)",
        name="--index-type",
    )
    shards: int = flag(1, "FAISS shards, merged", min=1, max=4096)
    mmap: bool = False  # map the FAISS files instead of reading them into memory
    hnsw_m: int = 32
    ef_construction: int = 80
    ef_search: int = flag(64, "HNSW search breadth", min=1)
    nlist: int = flag(0, "IVF lists (0: 4*sqrt(n))", min=0)  # about 4 * sqrt(passages per shard)
    nprobe: int = flag(16, "IVF lists searched per query", min=1)
    pq_m: int = 48  # sub-quantizers (384 dims / 48 = 8 dims each, 8 bits: 48 bytes a vector)
    train_sample: int = 100_000

    def __post_init__(self) -> None:
        if self.kind not in INDEX_KINDS:
            raise UnknownName("dense index type", self.kind, list(INDEX_KINDS))
        if self.shards < 1:
            raise InputError("--shards must be at least 1")

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["encoder"] = self.encoder.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> DenseSettings:
        data = dict(data or {})
        encoder = EncoderSpec(**data.pop("encoder", {}))
        known = {f.name for f in fields(cls)}
        return cls(encoder=encoder, **{k: v for k, v in data.items() if k in known})


def passage_text(p: Passage) -> str:
    """What the encoder sees of a passage: its title and section path, then its text. A file's
    title that is only its name is left out, so renaming a file re-embeds nothing."""
    head = [p.title] if p.title else []
    if p.locator is not None:
        if p.title == PurePath(p.locator.source).stem and not p.locator.record:
            head = []
        if p.locator.section:
            head.append(" > ".join(p.locator.section))
    return f"{' - '.join(head)}: {p.text}" if head else p.text


def chosen_kind(kind: str, passages: int) -> tuple[str, str]:
    """The FAISS type `kind` builds for this many passages, and why (what `index info` says)."""
    if kind != "auto":
        return kind, "as asked (--index-type)"
    if passages >= HNSW_FROM:
        return "hnsw", f"auto: {passages:,} passages, at least {HNSW_FROM:,} (exact search slows)"
    return "flat", f"auto: {passages:,} passages, under {HNSW_FROM:,} (exact search is fast)"


def build_faiss(vectors: np.ndarray, settings: DenseSettings) -> Any:
    """A FAISS inner-product index of the given type holding `vectors` (trained if IVF-PQ);
    `auto` chooses by their number (`chosen_kind`; a sharded index decides over all shards
    before)."""
    import faiss

    n, dim = vectors.shape
    kind = chosen_kind(settings.kind, n)[0]
    if kind == "flat":
        index = faiss.IndexFlatIP(dim)
    elif kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, settings.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = settings.ef_construction
    else:
        index = _trained_ivfpq(vectors, settings)
    index.add(vectors)
    return index


def _trained_ivfpq(vectors: np.ndarray, settings: DenseSettings) -> Any:
    import faiss

    n, dim = vectors.shape
    nlist = settings.nlist or max(1, int(4 * np.sqrt(n)))
    needed = max(39 * nlist, 256)  # FAISS wants ~39 points per centroid, PQ 256 per codebook
    if n < needed:
        raise InputError(
            f"ivfpq with {nlist} lists needs at least {needed} passages per shard, this has {n}; "
            "use --index-type flat or hnsw for a corpus this small"
        )
    if dim % settings.pq_m:
        raise InputError(f"--pq-m {settings.pq_m} must divide the dimension {dim}")
    index = faiss.IndexIVFPQ(
        faiss.IndexFlatIP(dim), dim, nlist, settings.pq_m, 8, faiss.METRIC_INNER_PRODUCT
    )
    rng = np.random.default_rng(0)
    size = min(n, max(settings.train_sample, 40 * nlist))  # k-means wants ~40 points a list
    sample = vectors[rng.choice(n, size=size, replace=False)]
    index.train(np.ascontiguousarray(sample))
    return index


def tune(index: Any, settings: DenseSettings) -> None:
    """Search-time parameters (not stored in FAISS files)."""
    if hasattr(index, "hnsw"):
        index.hnsw.efSearch = settings.ef_search
    if hasattr(index, "nprobe"):
        index.nprobe = settings.nprobe


def shard_bounds(n: int, shards: int) -> list[tuple[int, int]]:
    step = -(-n // shards) if n else 0
    return [(start, min(n, start + step)) for start in range(0, n, step)] if n else [(0, 0)]


def shard_files(shards: int) -> list[str]:
    return ["dense.faiss"] if shards == 1 else [f"dense-{i:03d}.faiss" for i in range(shards)]


class DenseRetriever:
    name = "dense"

    def __init__(
        self,
        passages: list[Passage],
        encoder: Encoder,
        parts: list[tuple[int, Any]],
        settings: DenseSettings,
    ) -> None:
        self.passages = passages
        self.encoder = encoder
        self.settings = settings
        self._parts = parts  # (offset of the shard's first passage, FAISS index)

    @classmethod
    def build(
        cls,
        passages: list[Passage],
        progress: EncodeProgress | None = None,
        settings: DenseSettings | None = None,
    ) -> DenseRetriever:
        settings = settings or DenseSettings()
        encoder = make_encoder(settings.encoder)
        vectors = encoder.encode([passage_text(p) for p in passages], progress)
        return cls.from_vectors(passages, vectors, encoder, settings)

    @classmethod
    def from_vectors(
        cls, passages: list[Passage], vectors: np.ndarray, encoder: Encoder, settings: DenseSettings
    ) -> DenseRetriever:
        parts = []
        built = replace(settings, kind=chosen_kind(settings.kind, len(passages))[0])
        for start, end in shard_bounds(len(passages), settings.shards):
            index = build_faiss(np.ascontiguousarray(vectors[start:end]), built)
            tune(index, settings)
            parts.append((start, index))
        return cls(passages, encoder, parts, settings)

    def save(self, directory: Path) -> None:
        import faiss

        for name, (_start, index) in zip(shard_files(len(self._parts)), self._parts, strict=True):
            faiss.write_index(index, str(directory / name))

    @classmethod
    def load(
        cls,
        directory: Path,
        passages: list[Passage],
        settings: DenseSettings | None = None,
        encoder: Encoder | None = None,
    ) -> DenseRetriever:
        """`encoder`: one already loaded for these settings (segments share one)."""
        import faiss

        settings = settings or DenseSettings()
        flags = faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY if settings.mmap else 0
        bounds = shard_bounds(len(passages), settings.shards)
        parts = []
        for name, (start, _end) in zip(shard_files(settings.shards), bounds, strict=True):
            index = faiss.read_index(str(directory / name), flags)
            tune(index, settings)
            parts.append((start, index))
        if sum(index.ntotal for _s, index in parts) != len(passages):
            raise IndexUnusable(f"the FAISS files in {directory} do not hold every passage")
        # the encoder loads with the index, not inside the first timed retrieval
        return cls(passages, encoder or make_encoder(settings.encoder), parts, settings)

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        return self.search_vector(self.encoder.encode([query]), k)

    def search_vector(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The `k` passages closest to a query's vector (a row), best first."""
        hits: list[tuple[int, float]] = []
        with one_thread():
            for start, index in self._parts:
                scores, ids = index.search(vector, min(k, index.ntotal))
                hits += [
                    (start + int(i), float(s))
                    for i, s in zip(ids[0], scores[0], strict=True)
                    if i >= 0
                ]
        hits.sort(key=lambda hit: (-hit[1], hit[0]))
        return hits[:k]


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """FAISS on one thread in the calling thread meanwhile (OpenMP keeps the count a thread at
    a time): one query's search is memory-bound, and FAISS's threads made it 15-25% slower on
    2 cores (docs/benchmarks.md §65), and slower still beside answers running at once."""
    import faiss

    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


def encode(texts: list[str], progress: EncodeProgress | None = None) -> np.ndarray:
    """Unit-length MiniLM embeddings with the reference (PyTorch) encoder."""
    return make_encoder(EncoderSpec()).encode(texts, progress)
