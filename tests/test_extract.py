"""A full fine-tune written as a LoRA adapter (`train export --lora-rank`): the low-rank cut,
the peft naming, and the GGUF written over the real embedded base reading back as the change
it was cut from."""

from __future__ import annotations

import pytest
import torch

from ragteam.errors import InputError, ModelError
from ragteam.smart.training.extract import adapter_tensors, extract_adapter, low_rank

pytest.importorskip("safetensors")


def _rank_two(out_dim: int, in_dim: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(out_dim, 2, generator=g) @ torch.randn(2, in_dim, generator=g) * 0.01


def test_a_rank_two_change_is_kept_whole_and_a_rank_one_cut_keeps_its_largest_part():
    delta = _rank_two(12, 20, 0)
    a, b, kept, total = low_rank(delta, 2)
    assert a.shape == (2, 20) and b.shape == (12, 2)
    assert torch.allclose(b @ a, delta, atol=1e-6) and kept == pytest.approx(total)
    a1, b1, kept1, _ = low_rank(delta, 1)
    assert 0.5 * total < kept1 < total
    # the best rank-1 approximation (Eckart-Young): what it misses is exactly the energy cut
    missed = float(torch.linalg.norm(delta - b1 @ a1).double() ** 2)
    assert missed == pytest.approx(total - kept1, rel=1e-3)


def test_block_linear_layers_become_pairs_and_other_changes_are_measured():
    base = {
        "model.layers.0.self_attn.q_proj.weight": torch.zeros(8, 8),
        "model.layers.0.mlp.up_proj.weight": torch.zeros(16, 8),
        "model.layers.0.input_layernorm.weight": torch.ones(8),
    }
    tuned = {
        "model.layers.0.self_attn.q_proj.weight": _rank_two(8, 8, 1),
        "model.layers.0.mlp.up_proj.weight": torch.zeros(16, 8),
        "model.layers.0.input_layernorm.weight": torch.ones(8) * 1.01,
    }
    tensors, report = adapter_tensors(base, tuned, rank=4)
    assert sorted(tensors) == [
        "base_model.model.model.layers.0.mlp.up_proj.lora_A.weight",
        "base_model.model.model.layers.0.mlp.up_proj.lora_B.weight",
        "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight",
        "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight",
    ]
    assert report.adapted == 2 and report.kept_energy == pytest.approx(1.0)
    assert 0 < report.left_out_energy < 1  # the norm's change cannot ride in an adapter
    tuned["model.layers.0.mlp.up_proj.weight"] = torch.zeros(8, 8)
    with pytest.raises(ModelError, match="not fine-tuned from this base"):
        adapter_tensors(base, tuned, rank=4)


@pytest.mark.integration
def test_the_gguf_adapter_over_the_real_base_reads_back_as_the_change(tmp_path, monkeypatch):
    """Layer 0's seven weights of the embedded base, each changed by a rank-2 difference: the
    exported GGUF (llama.cpp's layout, Q/K rows permuted) reads back as those differences."""
    from safetensors.torch import save_file

    from ragteam.smart.training import extract
    from ragteam.smart.training.lora_export import read_gguf_adapter

    shapes = {"q_proj": (576, 576), "k_proj": (192, 576), "v_proj": (192, 576),
              "o_proj": (576, 576), "gate_proj": (1536, 576), "up_proj": (1536, 576),
              "down_proj": (576, 1536)}  # fmt: skip
    base, tuned, deltas = {}, {}, {}
    for n, (proj, shape) in enumerate(shapes.items()):
        section = "mlp" if proj in ("gate_proj", "up_proj", "down_proj") else "self_attn"
        key = f"model.layers.0.{section}.{proj}.weight"
        base[key] = torch.randn(*shape, generator=torch.Generator().manual_seed(n)) * 0.02
        deltas[proj] = _rank_two(*shape, seed=10 + n)
        tuned[key] = base[key] + deltas[proj]
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    save_file(tuned, str(model_dir / "model.safetensors"))

    class Loaded:  # stands in for load_base: the base weights as training saw them
        def state_dict(self):
            return base

    monkeypatch.setattr(
        "ragteam.smart.training.base_model.load_base", lambda spec: (Loaded(), None, None)
    )
    out, report = extract.extract_adapter(model_dir, "embedded", 2, tmp_path / "a.gguf")
    assert report.adapted == 7 and report.kept_energy == pytest.approx(1.0, abs=1e-6)
    config, tensors = read_gguf_adapter(out, heads=9, kv_heads=3)
    assert config["r"] == 2 and config["lora_alpha"] == 2.0  # scale alpha / rank = 1
    for proj, delta in deltas.items():
        section = "mlp" if proj in ("gate_proj", "up_proj", "down_proj") else "self_attn"
        prefix = f"base_model.model.model.layers.0.{section}.{proj}"
        product = tensors[f"{prefix}.lora_B.weight"] @ tensors[f"{prefix}.lora_A.weight"]
        assert torch.allclose(product, delta, atol=2e-4), proj  # f16 storage


def test_an_adapter_folder_or_an_empty_folder_is_refused(tmp_path):
    with pytest.raises(InputError, match="no full fine-tune"):
        extract_adapter(tmp_path, "embedded", 8, tmp_path / "a.gguf")
