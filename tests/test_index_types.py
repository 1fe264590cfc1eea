"""FAISS index types, shards, memory-mapped loading, encoders (ONNX, int8, a server)."""

import json

import numpy as np
import pytest

from ragteam.errors import IndexUnusable, InputError, UnknownName
from ragteam.retrieval import build_index, load_index
from ragteam.retrieval.dense import DenseSettings, build_faiss, shard_bounds, tune
from ragteam.retrieval.encoder_registry import make_encoder
from ragteam.retrieval.encoders import EncoderSpec


def _clustered(n: int, dim: int = 384, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(64, dim))
    x = centres[rng.integers(0, 64, n)] + 0.5 * rng.normal(size=(n, dim))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype("float32")


def test_settings_round_trip_through_the_manifest():
    settings = DenseSettings(
        EncoderSpec("server", "m", "http://127.0.0.1:9/v1"), kind="hnsw", shards=3
    )
    again = DenseSettings.from_json(json.loads(json.dumps(settings.to_json())))
    assert again == settings
    assert DenseSettings.from_json(None) == DenseSettings()  # indexes built before settings


def test_bad_settings_are_named():
    with pytest.raises(UnknownName, match="flat"):
        DenseSettings(kind="annoy")
    with pytest.raises(InputError):
        DenseSettings(shards=0)
    with pytest.raises(InputError, match="embed-url"):
        EncoderSpec.parse("openai:bge")
    with pytest.raises(UnknownName):
        EncoderSpec.parse("tensorflow")


def test_shard_bounds_cover_every_row_once():
    for n, shards in [(10, 3), (9, 3), (1, 4), (0, 2), (100, 1)]:
        bounds = shard_bounds(n, shards)
        rows = [i for start, end in bounds for i in range(start, end)]
        assert rows == list(range(n)) and len(bounds) <= max(1, shards)


@pytest.mark.parametrize("kind", ["hnsw", "ivfpq"])
def test_approximate_indexes_find_most_of_the_exact_neighbours(kind):
    data, queries = _clustered(20_000), _clustered(50, seed=1)
    exact = build_faiss(data, DenseSettings(kind="flat"))
    approx = build_faiss(data, settings := DenseSettings(kind=kind, nlist=128, nprobe=32))
    tune(approx, settings)
    _, truth = exact.search(queries, 10)
    _, found = approx.search(queries, 10)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(truth, found, strict=True)])
    # well above chance (~0); 48-byte PQ codes lose much on noisy synthetic clusters
    assert recall > {"hnsw": 0.5, "ivfpq": 0.3}[kind], recall


def test_ivfpq_refuses_a_corpus_too_small_to_train():
    with pytest.raises(InputError, match="flat or hnsw"):
        build_faiss(_clustered(500), DenseSettings(kind="ivfpq"))


@pytest.mark.integration
def test_sharded_mmapped_index_returns_what_one_flat_index_returns(tmp_path):
    from ragteam.commands.demo import demo_corpus_path

    one, split = tmp_path / "one", tmp_path / "split"
    build_index(demo_corpus_path(), one, retriever="hybrid")
    manifest = build_index(
        demo_corpus_path(), split, retriever="hybrid", dense=DenseSettings(shards=3), mmap=True
    )
    assert manifest["params"]["dense"]["shards"] == 3 and manifest["params"]["mmap"] is True
    assert {"dense-000.faiss", "dense-002.faiss"} <= set(manifest["files"])
    a, b = load_index(one), load_index(split)
    for query in ["Who founded the company?", "river delta", "telescope mirror"]:
        for method in ("dense", "bm25", "hybrid"):
            assert [p.id for p in a.retrieve(query, 5, method)] == [
                p.id for p in b.retrieve(query, 5, method)
            ]


@pytest.mark.integration
def test_hnsw_index_on_disk_loads_and_retrieves(tmp_path):
    from ragteam.commands.demo import demo_corpus_path

    out = tmp_path / "hnsw"
    build_index(demo_corpus_path(), out, retriever="dense", dense=DenseSettings(kind="hnsw"))
    index = load_index(out)
    assert index.manifest.records["dense"]["kind"] == "hnsw"
    hits = index.retrieve("a question about a river", 3)
    assert len(hits) == 3 and hits[0].score >= hits[-1].score


@pytest.mark.parametrize(("threshold", "kind"), [(10, "hnsw"), (10_000, "flat")])
def test_auto_chooses_the_faiss_type_by_the_passage_count_and_says_why(
    tmp_path, monkeypatch, threshold, kind
):
    import faiss
    from typer.testing import CliRunner

    from ragteam.cli import app
    from ragteam.commands.demo import demo_corpus_path
    from ragteam.retrieval import dense

    monkeypatch.setattr(dense, "HNSW_FROM", threshold)  # the demo corpus: 48 passages
    out = tmp_path / "ix"
    manifest = build_index(demo_corpus_path(), out, retriever="dense")
    built = manifest["params"]["dense"]
    assert built["kind"] == "auto" and built["built"]["kind"] == kind
    assert str(threshold) in built["built"]["why"].replace(",", "")
    stored = faiss.read_index(str(out / "dense.faiss"))
    assert hasattr(stored, "hnsw") == (kind == "hnsw")
    assert load_index(out).retrieve("a question about a river", 3)
    said = CliRunner().invoke(app, ["index", "info", str(out)])
    assert said.exit_code == 0 and f"dense index: {kind} (auto: 48 passages" in said.output


@pytest.mark.integration
@pytest.mark.parametrize(("backend", "closeness"), [("onnx", 0.999), ("onnx-int8", 0.9)])
def test_onnx_encoders_agree_with_pytorch(backend, closeness):
    pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
    from ragteam.commands.demo import demo_corpus_path

    texts = [json.loads(line)["text"] for line in demo_corpus_path().open()][:12]
    reference = make_encoder(EncoderSpec("torch")).encode(texts)
    vectors = make_encoder(EncoderSpec(backend)).encode(texts)
    assert vectors.shape == reference.shape
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert float(np.min(np.sum(vectors * reference, axis=1))) > closeness


@pytest.mark.integration
def test_an_index_remembers_its_encoder(tmp_path):
    pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
    from ragteam.commands.demo import demo_corpus_path

    out = tmp_path / "int8"
    spec = EncoderSpec("onnx-int8")
    build_index(demo_corpus_path(), out, retriever="dense", dense=DenseSettings(spec))
    index = load_index(out)
    assert index.manifest.embedding_model.endswith("+onnx-int8/per-channel")
    assert index.searchers["dense"].encoder.identity == index.manifest.embedding_model


@pytest.mark.integration
def test_embeddings_from_a_real_server(tmp_path, embedding_server):
    from ragteam.commands.demo import demo_corpus_path

    # one text a request: llama-cpp-python's server mis-slices token embeddings of a batch
    spec = EncoderSpec.parse("openai:smollm2-embed", embedding_server, batch=1)
    texts = [f"passage number {i} about {'rivers' if i % 2 else 'mountains'}" for i in range(10)]
    concurrent = make_encoder(spec).encode(texts)  # 4 requests in flight, order kept
    one_by_one = np.stack([make_encoder(spec).encode([t])[0] for t in texts])
    assert concurrent.shape[0] == 10 and np.allclose(concurrent, one_by_one, atol=1e-4)
    assert not np.allclose(concurrent[0], concurrent[1], atol=1e-3)
    out = tmp_path / "served"
    manifest = build_index(demo_corpus_path(), out, retriever="dense", dense=DenseSettings(spec))
    assert manifest["embedding_model"] == f"openai:smollm2-embed@{embedding_server}"
    assert len(load_index(out).retrieve("rivers", 3)) == 3


def test_an_unreachable_embedding_server_is_a_clear_error(monkeypatch):
    import ragteam.retrieval.embed_server as served

    monkeypatch.setattr(served, "RETRIES", 0)
    encoder = make_encoder(EncoderSpec("server", "m", "http://127.0.0.1:9/v1"))
    with pytest.raises(IndexUnusable, match="unreachable"):
        encoder.encode(["hello"])


def test_bm25_is_mapped_from_a_size_up_unless_the_load_says(bm25_index_dir, monkeypatch):
    """BM25's matrix is read into memory for a small index, mapped from BM25_MAP_FROM
    passages up (and `index info` says so), and a load that asks either way gets it."""
    from ragteam.retrieval import builtin_kinds, load_index
    from ragteam.retrieval.index import read_manifest

    small = load_index(bm25_index_dir)
    assert not small.searchers["bm25"].mapped
    monkeypatch.setattr(builtin_kinds, "BM25_MAP_FROM", 10)
    large = load_index(bm25_index_dir)
    assert large.searchers["bm25"].mapped
    assert large.retrieve("lighthouse", 3) == small.retrieve("lighthouse", 3)
    assert not load_index(bm25_index_dir, mmap=False).searchers["bm25"].mapped
    mapped, why = builtin_kinds.bm25_mapped(read_manifest(bm25_index_dir), 12)
    assert mapped and "from 10" in why


def test_one_query_searches_faiss_on_one_thread_and_leaves_the_count_as_it_was(tmp_path):
    import faiss

    from ragteam.commands.demo import demo_corpus_path

    out = tmp_path / "ix"
    build_index(demo_corpus_path(), out, retriever="dense")
    dense = load_index(out).searchers["dense"]
    seen: list[int] = []

    class Watched:  # the FAISS index, reporting the threads it is searched with
        def __init__(self, inner):
            self.inner, self.ntotal = inner, inner.ntotal

        def search(self, vector, k):
            seen.append(faiss.omp_get_max_threads())
            return self.inner.search(vector, k)

    dense._parts = [(start, Watched(index)) for start, index in dense._parts]
    faiss.omp_set_num_threads(2)
    hits = dense.search("a question about a river", 3)
    assert len(hits) == 3 and seen == [1]
    assert faiss.omp_get_max_threads() == 2  # as it was, for a build in the same thread
