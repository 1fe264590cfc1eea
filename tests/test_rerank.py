"""The block reranker: training data from a `train build` folder, training on the real MiniLM,
the weights file, and SMART's trajectory mode ordering its block with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragteam.errors import InputError
from ragteam.minilm.settings import TopLayersSettings
from ragteam.smart.rerank import load_reranker, rerank_traced
from ragteam.smart.training.rerank import blocks_from_build, train_reranker
from ragteam.trace import Trace
from ragteam.types import Passage


def item(n: int, answer_at: int | None, relevant: list[int], split: str = "train", **extra):
    """A build row: passage `answer_at` holds the answer "Hevik"; the others are filler."""
    passages = [
        ["Lighthouse", f"The engineer of lighthouse {n} was born in Hevik."]
        if i == answer_at
        else ["Weather", f"Rain fell on the coast for {i} days in the year {1900 + n}."]
        for i in range(1, 5)
    ]
    judgements = [
        {"index": i, "title": t, "relevant": i in relevant, "fact": x if i in relevant else ""}
        for i, (t, x) in enumerate(passages, 1)
    ]
    row = {
        "id": f"q{n}",
        "question": f"Where was the engineer of lighthouse {n} born?",
        "answers": ["Hevik"],
        "intent_source": "heuristic",
        "trajectory": {
            "intents": ["lighthouse engineer"],
            "passages": passages,
            "judgements": judgements,
            "answer": "Hevik",
            "citations": relevant,
        },
        "passage_ids": [f"p{n}-{i}" for i in range(1, 5)],
        "gold_titles": ["Lighthouse"],
        "split": split,
        "label_source": "gold",
        "posed": "",
        "format": "open",
    }
    return row | extra


def write_build(folder: Path, rows: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def test_blocks_weight_the_answer_passage_above_other_relevant_ones(tmp_path):
    rows = [
        item(1, answer_at=3, relevant=[1, 3]),
        item(2, answer_at=None, relevant=[]),  # nothing relevant: teaches nothing
        item(3, answer_at=2, relevant=[2], label_source="none"),  # no gold evidence
    ]
    [block] = blocks_from_build(write_build(tmp_path / "b", rows))
    assert block.answer_at == [False, False, True, False]
    assert block.target[2] > block.target[0] > 0 == block.target[1] == block.target[3]
    assert sum(block.target) == pytest.approx(1.0)
    assert block.texts[2].startswith("Lighthouse. ")


def test_a_folder_without_items_is_refused(tmp_path):
    with pytest.raises(InputError, match="train build"):
        blocks_from_build(tmp_path)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A reranker trained for one epoch on blocks whose answer passage moves around."""
    rows = [item(n, answer_at=1 + n % 4, relevant=[1 + n % 4]) for n in range(16)]
    rows += [
        item(100 + n, answer_at=1 + n % 4, relevant=[1 + n % 4], split="validation")
        for n in range(4)
    ]
    folder = write_build(tmp_path_factory.mktemp("rr") / "build", rows)
    out = folder.parent / "rerank.safetensors"
    settings = TopLayersSettings(epochs=2, lr=1e-4, head_lr=2e-2, layers=1, batch=2)
    record = train_reranker(folder, out, settings)
    return out, record


def test_training_lowers_validation_loss_and_keeps_the_best_epoch(trained):
    out, record = trained
    losses = [r["loss"] for r in record["history"]]
    assert record["chosen"]["loss"] == min(losses) < losses[0]
    start, chosen = record["history"][0], record["chosen"]
    assert chosen["first_answer_reranked"] >= start["first_answer_reranked"]
    assert json.loads(out.with_suffix(".json").read_text())["train_blocks"] == 16


def test_the_file_holds_only_the_trained_top_layer_and_head_in_fp16(trained):
    from safetensors import safe_open

    out, _ = trained
    with safe_open(str(out), "pt") as f:
        names = list(f.keys())
        assert {str(f.get_tensor(n).dtype) for n in names} == {"torch.float16"}
    assert {"head.weight", "head.bias"} <= set(names)
    assert all(n.startswith("head.") or ".layer.5." in n for n in names)


def test_the_loaded_reranker_orders_passages_by_score_and_is_traced(trained):
    out, _ = trained
    reranker = load_reranker(out)
    passages = [
        Passage("a", "Weather", "Rain fell on the coast for 3 days in the year 1907."),
        Passage("b", "Lighthouse", "The engineer of lighthouse 7 was born in Hevik."),
    ]
    question = "Where was the engineer of lighthouse 7 born?"
    scores = reranker.scores(question, passages)
    assert scores == reranker.scores(question, passages)  # deterministic
    trace = Trace()
    ordered = rerank_traced(reranker, trace, question, passages)
    best_first = sorted(zip(scores, passages, strict=True), key=lambda x: -x[0])
    assert [p.id for p in ordered] == [p.id for _, p in best_first]
    [step] = trace.steps
    assert step.role == "reranker" and step.input["method"] == reranker.identity
    assert [h["id"] for h in step.output] == [p.id for p in ordered]


def test_a_missing_corrupt_or_foreign_file_is_a_clear_error(tmp_path):
    import torch
    from safetensors.torch import save_file

    with pytest.raises(InputError, match="no reranker"):
        load_reranker(tmp_path / "none.safetensors")
    broken = tmp_path / "broken.safetensors"
    broken.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json")
    with pytest.raises(InputError, match="unreadable"):
        load_reranker(broken)
    foreign = tmp_path / "foreign.safetensors"
    save_file({"x": torch.zeros(2)}, str(foreign))
    with pytest.raises(InputError, match="no ragteam reranker"):
        load_reranker(foreign)
