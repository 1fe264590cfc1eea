"""The vectors a hybrid sync gathers from the embedding cache (issue 89 item 3)."""

from __future__ import annotations

import tracemalloc

import numpy as np

from ragteam.retrieval.embed_cache import cached_encode
from ragteam.retrieval.encoder_registry import make_encoder
from ragteam.retrieval.encoders import EncoderSpec
from ragteam.retrieval.sources import SyncCache, text_key


def _cached(tmp_path, seed: int) -> tuple[EncoderSpec, list[str], np.ndarray, SyncCache]:
    """20,000 texts whose random vectors the sync cache holds for the default encoder."""
    spec = EncoderSpec()
    texts = [f"passage number {i}" for i in range(20000)]
    vectors = np.random.default_rng(seed).standard_normal((20000, 384)).astype(np.float32)
    cache = SyncCache(tmp_path / "cache.sqlite")
    cache.put_vectors(make_encoder(spec).identity, [text_key(t) for t in texts], vectors)
    return spec, texts, vectors, cache


def test_cached_vectors_are_gathered_without_a_second_copy_of_them_all(tmp_path):
    """Every cached vector was held twice (a dict of them all, then the stacked array) before
    FAISS copied them a third time: about 1.5 GB each at a million passages. They now go
    straight into the one array returned, a few thousand looked up at a time; a text asked
    twice gets its vector twice, and nothing cached is embedded again."""
    spec, texts, vectors, cache = _cached(tmp_path, seed=0)
    stats: dict[str, int] = {}
    encode = cached_encode(cache, None, stats)
    tracemalloc.start()
    try:
        out = encode([*texts, texts[7]], spec, None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert stats["embedded"] == 0
    assert out.shape == (20001, 384)
    assert np.array_equal(out[:20000], vectors) and np.array_equal(out[20000], vectors[7])
    assert peak < 1.5 * out.nbytes, f"peak {peak / 1e6:.1f} MB for {out.nbytes / 1e6:.1f} MB"


def test_with_a_spill_folder_the_vectors_are_gathered_in_a_file_and_faiss_reads_them(
    tmp_path, monkeypatch
):
    """Above SPILL_BYTES the array is a memory map of a nameless file in the spill folder:
    the same vectors, under half of them in the process's own memory (the in-memory array:
    all of them and more, the test above), a FAISS index built
    from it the same as from memory, and no file left behind."""
    import os

    import faiss

    from ragteam.retrieval import embed_cache

    spec, texts, vectors, cache = _cached(tmp_path, seed=1)
    monkeypatch.setattr(embed_cache, "SPILL_BYTES", 1 << 20)
    spill = tmp_path / "spill"
    tracemalloc.start()
    try:
        out = cached_encode(cache, None, {}, spill=spill)(texts, spec, None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(out, np.memmap) and np.array_equal(out, vectors)
    assert peak < 0.5 * out.nbytes, f"peak {peak / 1e6:.1f} MB for {out.nbytes / 1e6:.1f} MB"
    assert os.listdir(spill) == []  # nameless: gone with the array
    mapped, held = faiss.IndexFlatIP(384), faiss.IndexFlatIP(384)
    mapped.add(np.ascontiguousarray(out))
    held.add(vectors)
    query = vectors[:5] + 0.01
    assert np.array_equal(mapped.search(query, 10)[1], held.search(query, 10)[1])
    small = cached_encode(cache, None, {}, spill=spill)(texts[:100], spec, None)
    assert not isinstance(small, np.memmap)  # under SPILL_BYTES: in memory, as before
