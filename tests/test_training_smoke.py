"""SMART trajectory learning end to end on the real embedded model, in seconds: build
trajectories for 5 questions, train a few steps, export a GGUF, load it with llama.cpp and let it
play a whole trajectory. The real training run is a benchmark (docs/benchmarks.md), not a test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragteam.retrieval import build_index, load_index

pytest.importorskip("gguf")
pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parent / "data" / "train"


@pytest.fixture(scope="module")
def base():
    from ragteam.smart.training.base_model import load_base

    return load_base("embedded")


def test_tokenizer_matches_llama_cpp_and_mask_holds_on_real_tokens(base, embedded_model):
    from ragteam.smart.training.tokens import IGNORE, tokenize_example

    _model, tokenizer, bos = base
    text = (
        "<|Instruction|>:\nWho?</eoi>\n\n<|Reconstructor|>:\nSearch(x)</eor>\n\n"
        "<retrieval>[1] T\nbody words</retrieval>\n\n"
    )
    prompt_chars = text.index("<|Reconstructor|>")
    tokenized = tokenize_example(tokenizer, text, prompt_chars, bos)
    llama = embedded_model._llm.tokenize(text.encode(), add_bos=False, special=False)
    assert tokenized.input_ids == list(llama)
    decoded_trained = tokenizer.decode(
        [t for t, lab in zip(tokenized.input_ids, tokenized.labels, strict=True) if lab != IGNORE]
    )
    assert "Search(x)" in decoded_trained and "<retrieval>" in decoded_trained
    assert "body words" not in decoded_trained and "Who?" not in decoded_trained


def test_decision_weight_lands_on_the_deciding_token_of_the_real_tokenizer(base):
    from ragteam.smart.training.tokens import tokenize_example

    _model, tokenizer, bos = base
    prompt = "<|Instruction|>:\nWho?</eoi>\n\n"
    text = prompt + (
        "<|Locator|>:\n[Relevant]: [1] T\nbody words\n"
        "[Irrelevant]: [2] Lacking Supporting Facts</eol>"
    )
    weighted = tokenize_example(tokenizer, text, len(prompt), bos, decision_weight=2.0)
    heavy = [t for t, w in zip(weighted.input_ids, weighted.weights, strict=True) if w == 2.0]
    pieces = [tokenizer.decode([t]).lstrip("[") for t in heavy]
    assert len(pieces) == 2 and pieces[0] != pieces[1]  # where the two judgements part
    assert "Relevant".startswith(pieces[0]) and "Irrelevant".startswith(pieces[1]), pieces


def test_exporting_the_untouched_base_reproduces_its_weights(base, tmp_path):
    """Transformers undoes llama.cpp's Q/K permutation on load; the export must redo it."""
    from gguf import GGUFReader
    from gguf.quants import dequantize

    from ragteam.smart.training.base_model import base_gguf
    from ragteam.smart.training.export import export_gguf

    model, _tok, _bos = base
    source = base_gguf("embedded")
    out = export_gguf(model.state_dict(), source, tmp_path / "same.gguf", "f32")
    original = {t.name: t for t in GGUFReader(source).tensors}
    exported = {t.name: t for t in GGUFReader(out).tensors}
    assert original.keys() == exported.keys()
    for name in ("blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.3.ffn_down.weight"):
        a = dequantize(original[name].data, original[name].tensor_type)
        b = np.asarray(exported[name].data, dtype=np.float32).reshape(a.shape)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


def test_build_fit_export_and_run_a_trajectory(tmp_path):
    from ragteam.asking.api import answer
    from ragteam.llm.llamacpp import LlamaCppModel
    from ragteam.smart.training.build import BuildSettings
    from ragteam.smart.training.dataset import build_dataset, read_all
    from ragteam.smart.training.fit import FitSettings, fit

    index_dir = tmp_path / "idx"
    build_index(DATA / "train_corpus_slice.jsonl", index_dir, retriever="bm25", passage_words=0)
    questions, _skipped, _n = read_all([DATA / "hotpotqa_train6.jsonl"], [], False)
    stats = build_dataset(
        questions[:5], load_index(index_dir), tmp_path / "traj", BuildSettings(k=2, max_passages=2)
    )
    assert stats["questions"] == 5
    settings = FitSettings(max_steps=3, batch_tokens=1024, max_length=1024, threads=2)
    report = fit(tmp_path / "traj", tmp_path / "run", settings)
    assert report.steps == 3 and report.tokens > 0 and report.trained_tokens > 0
    assert (tmp_path / "run" / "model" / "config.json").is_file()
    from ragteam.smart.training.export import export_folder

    gguf = export_folder(
        tmp_path / "run" / "model",
        __import__("ragteam.smart.training.base_model", fromlist=["x"]).base_gguf("embedded"),
        tmp_path / "run" / "model.gguf",
    )
    model = LlamaCppModel(gguf, n_ctx=2048)
    result = answer(
        questions[5].question,
        index=load_index(index_dir),
        strategy="smart",
        model=model,
        options={"mode": "trajectory", "k": 2, "max_passages": 2, "max_answer_tokens": 24},
    )
    roles = [s.role for s in result.trace.steps if s.kind == "llm"]
    assert roles == ["reconstructor", "locator", "generator"]
    notes = [s for s in result.trace.steps if s.meta.get("event") == "trajectory"]
    assert notes and "<|Generator|>:\n" in notes[0].meta["trajectory"]


def test_a_killed_run_resumes_from_its_last_checkpoint(tmp_path):
    from ragteam.smart.training.build import BuildSettings
    from ragteam.smart.training.dataset import build_dataset, read_all
    from ragteam.smart.training.fit import FitSettings, fit

    index_dir = tmp_path / "idx"
    build_index(DATA / "train_corpus_slice.jsonl", index_dir, retriever="bm25", passage_words=0)
    questions, _skipped, _n = read_all([DATA / "hotpotqa_train6.jsonl"], [], False)
    build_dataset(questions, load_index(index_dir), tmp_path / "traj", BuildSettings(k=1))
    settings = FitSettings(
        stages=("short",),
        short_roles=("reconstructor",),
        max_steps=3,
        checkpoint_every=1,
        batch_tokens=128,
        threads=2,
    )
    seen: list[int] = []

    def interrupt(step):
        seen.append(step.step)
        if step.step == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fit(tmp_path / "traj", tmp_path / "run", settings, on_step=interrupt)
    from ragteam.errors import InputError

    with pytest.raises(InputError, match="--resume"):
        fit(tmp_path / "traj", tmp_path / "run", settings)
    report = fit(tmp_path / "traj", tmp_path / "run", settings, resume=True, on_step=interrupt)
    assert seen == [1, 2, 3] and report.steps == 3  # step 2 was checkpointed before the kill
