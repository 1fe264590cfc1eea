"""A full fine-tune written as a LoRA adapter: for every linear layer of the blocks, the
difference between the tuned weight and the base weight it started from, cut to its top `rank`
singular directions (B = U·√S, A = √S·Vᵀ, alpha = rank so llama.cpp's scale is 1).

Full fine-tuning learns faster than LoRA at the same budget (docs/benchmarks.md section 23),
but its result is a whole model (145 MB for the embedded base), too big to ship in the package;
the adapter is a few MB. What the cut leaves out is measured and returned: the share of each
difference's energy (squared Frobenius norm) beyond `rank`, and the change of every weight that
is not a block's linear layer (embeddings, norms), which no LoRA adapter carries.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragteam.errors import InputError, ModelError

TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
_LINEAR = re.compile(r"model\.layers\.\d+\.(self_attn|mlp)\.(\w+)\.weight")


@dataclass(frozen=True)
class Extraction:
    rank: int
    adapted: int  # weights written as A/B pairs
    kept_energy: float  # share of the adapted weights' change the adapter keeps
    left_out_energy: float  # share of the whole change in weights no adapter can carry

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "adapted_weights": self.adapted,
            "kept_energy": round(self.kept_energy, 4),
            "left_out_energy": round(self.left_out_energy, 4),
        }


def low_rank(delta: Any, rank: int) -> tuple[Any, Any, float, float]:
    """(A: rank x in, B: out x rank, energy kept, total energy) with B @ A the best rank-`rank`
    approximation of `delta` (out x in)."""
    import torch

    u, s, vh = torch.linalg.svd(delta.double(), full_matrices=False)
    r = min(rank, s.numel())
    root = s[:r].sqrt()
    b = (u[:, :r] * root).float()
    a = (root[:, None] * vh[:r]).float()
    energy = s.pow(2)
    return a, b, float(energy[:r].sum()), float(energy.sum())


def adapter_tensors(
    base: dict[str, Any], tuned: dict[str, Any], rank: int
) -> tuple[dict[str, Any], Extraction]:
    """peft-named lora_A / lora_B tensors of every block linear layer in `tuned`."""
    tensors: dict[str, Any] = {}
    kept = adapted_total = left_out = 0.0
    for key, weight in tuned.items():
        if key not in base or base[key].shape != weight.shape:
            raise ModelError(
                f"the tuned weight '{key}' is not in the base or has another shape: the "
                "folder was not fine-tuned from this base (--base names the GGUF it started from)"
            )
        delta = weight.float() - base[key].float()
        match = _LINEAR.fullmatch(key)
        if not match or match.group(2) not in TARGETS:
            left_out += float(delta.double().pow(2).sum())
            continue
        a, b, k, total = low_rank(delta, rank)
        prefix = "base_model.model." + key.removesuffix(".weight")
        tensors[f"{prefix}.lora_A.weight"] = a.contiguous()
        tensors[f"{prefix}.lora_B.weight"] = b.contiguous()
        kept += k
        adapted_total += total
    if not tensors:
        raise ModelError("no block linear layers (q/k/v/o/gate/up/down_proj) in the tuned model")
    whole = adapted_total + left_out
    report = Extraction(
        rank=rank,
        adapted=len(tensors) // 2,
        kept_energy=kept / adapted_total if adapted_total else 1.0,
        left_out_energy=left_out / whole if whole else 0.0,
    )
    return tensors, report


def write_adapter_folder(folder: Path, tensors: dict[str, Any], rank: int) -> None:
    """A peft-style adapter folder (what `train fit --lora` writes), for the GGUF exporter."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    config = {"peft_type": "LORA", "r": rank, "lora_alpha": float(rank), "target_modules": TARGETS}
    (folder / "adapter_config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    save_file(tensors, str(folder / "adapter_model.safetensors"))


def extract_adapter(
    model_dir: Path, base: str, rank: int, out: Path, out_type: str = "f16"
) -> tuple[Path, Extraction]:
    """Write the full fine-tune in `model_dir` (train fit's model/) as a GGUF LoRA adapter of
    `rank` over the GGUF base `base` (the one its training started from)."""
    from safetensors.torch import load_file

    from ragteam.smart.training.base_model import base_gguf, load_base, trained_from
    from ragteam.smart.training.lora_export import export_lora

    weights = model_dir / "model.safetensors"
    if not weights.is_file():
        raise InputError(
            f"no full fine-tune in {model_dir} (model.safetensors): `--lora-rank` reduces a "
            "`train fit` model/ folder; an adapter/ folder exports as it is"
        )
    # the GGUF the run started from, as its settings record it (runs continuing runs
    # followed), else the one named: the change is measured from the weights training saw
    gguf = trained_from(model_dir) or base_gguf(base)
    if gguf is None:
        raise InputError("--lora-rank needs the GGUF the model was tuned from (--base)")
    base_state = load_base(str(gguf))[0].state_dict()
    tensors, report = adapter_tensors(base_state, load_file(str(weights)), rank)
    scratch = Path(tempfile.mkdtemp(prefix="ragteam-extract-"))
    try:
        write_adapter_folder(scratch, tensors, rank)
        return export_lora(scratch, gguf, out, out_type), report
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
