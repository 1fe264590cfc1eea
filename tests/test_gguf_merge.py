"""The LoRA adapter merged into its base (ragteam/llm/gguf_merge.py): the merged GGUF scores as
llama.cpp scores base + adapter, is made once per base and adapter, and is a model of its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragteam.errors import ModelError
from ragteam.llm.llamacpp import LlamaCppModel, embedded_model_path
from ragteam.smart.agent import shipped_adapter
from ragteam.smart.format import RECONSTRUCTOR, render_prompt

QUESTIONS = [
    "Which city hosted the 1992 Summer Olympics?",
    "Who wrote the novel that the film Blade Runner is based on?",
]


@pytest.fixture(scope="module")
def shipped() -> Path:
    adapter = shipped_adapter()
    if adapter is None:
        pytest.skip("the package data holds no adapter")
    return adapter


def _scores(model: LlamaCppModel, prompt: str) -> np.ndarray:
    llm = model._llm
    llm.reset()
    llm.eval(llm.tokenize(prompt.encode(), add_bos=False, special=False))
    return np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).copy()


def test_the_merged_model_scores_as_the_applied_adapter(shipped):
    base = LlamaCppModel(None, n_ctx=512, n_threads=2)
    applied = LlamaCppModel(None, n_ctx=512, n_threads=2, lora=shipped, merge_lora=False)
    merged = LlamaCppModel(None, n_ctx=512, n_threads=2, lora=shipped)
    prompts = [render_prompt(q) + RECONSTRUCTOR for q in QUESTIONS] + ["The capital of France is"]
    clear = 0
    for prompt in prompts:
        b, a, m = (_scores(x, prompt) for x in (base, applied, merged))
        top, second = np.sort(a)[-2:][::-1]
        if top - second > 1.0:  # a clear favourite stays the favourite
            assert int(m.argmax()) == int(a.argmax()), prompt
            clear += 1
        # what the adapter changes, the merge changes alike (rounding to q8_0 aside)
        assert np.corrcoef(a - b, m - b)[0, 1] > 0.95, prompt
        assert np.abs(m - a).mean() < 0.25 * np.abs(a - b).mean(), prompt
    assert clear >= 2
    assert len({base.identity, applied.identity, merged.identity}) == 3
    assert "+merged:q8_0" in merged.identity


def test_a_merge_is_made_once_and_reused(shipped, tmp_path):
    from gguf import GGUFReader

    from ragteam.llm.gguf_merge import merged_model

    first = merged_model(embedded_model_path(), shipped, tmp_path)
    stamp = first.stat().st_mtime_ns
    assert merged_model(embedded_model_path(), shipped, tmp_path) == first
    assert first.stat().st_mtime_ns == stamp  # not merged again
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".gguf"] == [first.name]
    out, base = GGUFReader(first), GGUFReader(embedded_model_path())
    assert [t.name for t in out.tensors] == [t.name for t in base.tensors]
    kinds = {t.name: t.tensor_type.name for t in out.tensors}
    assert kinds["blk.0.attn_q.weight"] == "Q8_0"  # adapted: merged and re-quantized
    assert kinds["token_embd.weight"] == "Q8_0" and kinds["blk.0.attn_norm.weight"] == "F32"
    assert str(out.fields["general.architecture"].contents()) == "llama"
    assert out.fields["tokenizer.ggml.tokens"].contents() == (
        base.fields["tokenizer.ggml.tokens"].contents()
    )


def _adapter(path: Path, tensors: dict[str, np.ndarray]) -> Path:
    from gguf import GGUFWriter

    writer = GGUFWriter(str(path), "llama")
    writer.add_string("general.type", "adapter")
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", 16.0)
    for name, data in tensors.items():
        writer.add_tensor(name, data)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_broken_adapters_are_refused_by_the_merge(tmp_path):
    from ragteam.llm.gguf_merge import merge_adapter

    base = embedded_model_path()
    a = np.zeros((8, 576), dtype=np.float32)
    b = np.zeros((576, 8), dtype=np.float32)
    lonely = _adapter(tmp_path / "lonely.gguf", {"blk.0.attn_q.weight.lora_a": a})
    with pytest.raises(ModelError, match="without its lora_b"):
        merge_adapter(base, lonely, tmp_path / "out.gguf")
    wide = np.zeros((8, 1000), dtype=np.float32)
    shape = _adapter(
        tmp_path / "shape.gguf",
        {"blk.0.attn_q.weight.lora_a": wide, "blk.0.attn_q.weight.lora_b": b},
    )
    with pytest.raises(ModelError, match="another base model"):
        merge_adapter(base, shape, tmp_path / "out.gguf")
    foreign = _adapter(
        tmp_path / "foreign.gguf",
        {"blk.99.attn_q.weight.lora_a": a, "blk.99.attn_q.weight.lora_b": b},
    )
    with pytest.raises(ModelError, match="another base model"):
        merge_adapter(base, foreign, tmp_path / "out.gguf")
    assert not (tmp_path / "out.gguf").exists()  # nothing half-written left behind
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
