"""Evaluation and indexing on a real local Ray cluster (a head and one worker process on
127.0.0.1, one CPU each), torn down after."""

import json
from pathlib import Path

import numpy as np
import pytest

from ragteam.eval.evaluate import evaluate
from ragteam.eval.row import EvalRow
from ragteam.llm import ModelOptions
from ragteam.retrieval import build_index, load_index

DATA = Path(__file__).resolve().parent / "data"
ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'ragteam[ray]'")
pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A head and a worker node on 127.0.0.1, one CPU each; stopped after."""
    from ragteam.scale.local_cluster import local_cluster

    with local_cluster(2, 1, tmp_path_factory.mktemp("ray")) as address:
        yield address


def _stable(row: EvalRow) -> dict:
    """A row without what depends on the clock."""
    whole = row.to_dict()
    keep = {k: v for k, v in whole.items() if k not in ("wall_seconds", "cost", "trace")}
    keep["steps"] = [(s["kind"], s["role"], s["output"]) for s in row.trace["steps"]]
    return keep


def test_eval_on_ray_writes_the_rows_a_local_run_writes(cluster, tmp_path, hotpot_bm25_dir):
    data = tmp_path / "q.jsonl"
    lines = (DATA / "hotpotqa" / "dev10.jsonl").read_text().splitlines()[:3]
    data.write_text("\n".join(lines) + "\n")
    options = ModelOptions(cache=False, n_threads=1)
    common = {
        "strategies": "nor,oner",
        "index": hotpot_bm25_dir,
        "model": "embedded",
        "model_options": options,
    }
    local = evaluate(data, tmp_path / "local", workers=1, **common)
    remote = evaluate(data, tmp_path / "ray", ray=cluster, **common)
    assert len(remote) == len(local) == 6
    key = lambda row: (row.id, row.strategy)  # noqa: E731
    assert [_stable(r) for r in sorted(remote, key=key)] == [
        _stable(r) for r in sorted(local, key=key)
    ]
    written = [json.loads(x) for x in (tmp_path / "ray" / "results.jsonl").read_text().splitlines()]
    assert len(written) == 6
    assert evaluate(data, tmp_path / "ray", ray=cluster, **common) == []  # resumes: nothing left


def test_index_build_on_ray_matches_a_local_build(cluster, tmp_path):
    from ragteam.commands.demo import demo_corpus_path

    local, remote = tmp_path / "local", tmp_path / "ray"
    build_index(demo_corpus_path(), local, retriever="dense")
    from ragteam.scale.ray_index import ray_encoder

    encode = ray_encoder(cluster)
    manifest = build_index(demo_corpus_path(), remote, retriever="dense", encode=encode)
    assert manifest["embedding_model"] == load_index(local).manifest.embedding_model
    a, b = load_index(local), load_index(remote)
    ids = lambda index, q: [p.id for p in index.retrieve(q, 5)]  # noqa: E731
    for query in ["river", "a famous scientist", "which company was founded first"]:
        assert ids(a, query) == ids(b, query)
    scores_a = [p.score for p in a.retrieve("river", 5)]
    scores_b = [p.score for p in b.retrieve("river", 5)]
    assert np.allclose(scores_a, scores_b, atol=1e-4)


def test_index_sync_on_ray_embeds_a_folder_as_a_local_sync_does(cluster, tmp_path):
    """Issue 70: `index sync --ray` (it was `build` only; and a sync's cache handed the cluster
    256 texts a call, a new connection and new actors each time)."""
    from docfiles import make_folder
    from typer.testing import CliRunner

    from ragteam.cli import app
    from ragteam.retrieval import sync_folder
    from ragteam.retrieval.index import IndexSettings

    folder = make_folder(tmp_path / "docs")
    local = sync_folder(folder, tmp_path / "local", index=IndexSettings(retriever="dense"))
    args = ["index", "sync", str(folder), "--out", str(tmp_path / "ray"), "--retriever", "dense"]
    done = CliRunner().invoke(app, [*args, "--ray", cluster])
    assert done.exit_code == 0, done.output
    a, b = load_index(tmp_path / "local"), load_index(tmp_path / "ray")
    assert [p.id for p in a.passages] == [p.id for p in b.passages] and local.embedded > 0
    for query in ["lighthouse repair", "installer", "ferry timetable"]:
        hits_a, hits_b = a.retrieve(query, 5), b.retrieve(query, 5)
        assert [p.id for p in hits_a] == [p.id for p in hits_b]
        assert np.allclose([p.score for p in hits_a], [p.score for p in hits_b], atol=1e-4)
