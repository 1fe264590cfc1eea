"""Export a LoRA adapter (peft's folder, `train fit --lora`) as a llama.cpp GGUF LoRA adapter.

llama.cpp's adapter layout: `general.type = adapter`, `adapter.type = lora`,
`adapter.lora.alpha`, and for each adapted weight `W` of the base (llama.cpp's tensor name) two
tensors `NAME.lora_a` (rank x in) and `NAME.lora_b` (out x rank); llama.cpp adds
`scale * alpha / rank * B @ A` to `W x` at run time, over a quantized base. The Q/K row
permutation that llama.cpp's converter applies to `W` applies to `B`'s rows (they are `W`'s
output rows). The file also records the base it was trained on (`ragteam.base.fingerprint`),
so that loading it over another model is refused with a clear message.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from ragteam.errors import ModelError
from ragteam.llm.gguf_files import BASE_KEY, BASE_NAME_KEY, finish_gguf, gguf_fingerprint
from ragteam.smart.training.export import SUPPORTED, permute

TYPES = ("f16", "f32")
_PEFT = re.compile(
    r"base_model\.model\.model\.layers\.(\d+)\.(self_attn|mlp)\.(\w+)\.lora_([AB])\.weight"
)
_GGUF_NAME = {
    "q_proj": "attn_q",
    "k_proj": "attn_k",
    "v_proj": "attn_v",
    "o_proj": "attn_output",
    "gate_proj": "ffn_gate",
    "up_proj": "ffn_up",
    "down_proj": "ffn_down",
}


def is_adapter_folder(folder: Path) -> bool:
    return (folder / "adapter_config.json").is_file()


def read_adapter(folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(peft's adapter config, its tensors by name)."""
    from safetensors.torch import load_file

    weights = folder / "adapter_model.safetensors"
    if not is_adapter_folder(folder) or not weights.is_file():
        raise ModelError(
            f"no LoRA adapter in {folder} (adapter_config.json and adapter_model.safetensors): "
            "train one with `ragteam train fit --lora`; a full fine-tune exports with "
            "`ragteam train export RUN/model --out FILE.gguf`"
        )
    config = json.loads((folder / "adapter_config.json").read_text(encoding="utf-8"))
    return config, load_file(str(weights))


def lora_tensors(tensors: dict[str, Any], heads: int, kv_heads: int) -> list[tuple[str, Any]]:
    """(llama.cpp name, float32 array) for every lora_a / lora_b, in layer order."""
    named: list[tuple[tuple[int, str, str], str, Any]] = []
    for key, value in tensors.items():
        match = _PEFT.fullmatch(key.replace(".default.", "."))
        if not match or match.group(3) not in _GGUF_NAME:
            raise ModelError(f"cannot map the adapter tensor '{key}' to a llama.cpp weight")
        layer, _, proj, part = match.groups()
        base = f"blk.{layer}.{_GGUF_NAME[proj]}.weight"
        data = value.detach().float().cpu().numpy()
        if part == "B" and proj == "q_proj":
            data = permute(data, heads)
        elif part == "B" and proj == "k_proj":
            data = permute(data, kv_heads)
        named.append(((int(layer), proj, part), f"{base}.lora_{part.lower()}", data))
    return [(name, data) for _, name, data in sorted(named, key=lambda n: n[0])]


def export_lora(folder: Path, base: Path, out: Path, out_type: str = "f16") -> Path:
    """Write the adapter in `folder` as a GGUF LoRA adapter for the GGUF `base`."""
    import numpy as np
    from gguf import GGUFReader, GGUFWriter

    if out_type not in TYPES:
        raise ModelError(f"unknown adapter type '{out_type}'; types: {', '.join(TYPES)}")
    if out.is_dir():
        raise ModelError(f"--out {out} is a folder; name the .gguf file to write")
    config, tensors = read_adapter(folder)
    reader = GGUFReader(base)
    arch = str(reader.fields["general.architecture"].contents())
    if arch not in SUPPORTED:
        raise ModelError(f"cannot export a LoRA adapter for architecture '{arch}'")
    heads = int(reader.fields[f"{arch}.attention.head_count"].contents())
    kv_heads = int(reader.fields[f"{arch}.attention.head_count_kv"].contents())
    shapes = {t.name: [int(x) for x in reversed(t.shape)] for t in reader.tensors}
    pairs = lora_tensors(tensors, heads, kv_heads)
    _check_shapes(pairs, shapes)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    writer = GGUFWriter(tmp, arch)
    writer.add_string("general.type", "adapter")
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", float(config.get("lora_alpha", 8)))
    writer.add_string(BASE_KEY, gguf_fingerprint(base))
    writer.add_string(BASE_NAME_KEY, base.name)
    writer.add_uint32("ragteam.lora.rank", int(config.get("r", 0)))
    for name, data in pairs:
        array = np.ascontiguousarray(data, dtype=np.float32)
        writer.add_tensor(name, array.astype(np.float16) if out_type == "f16" else array)
    return finish_gguf(writer, tmp, out)


def _check_shapes(pairs: list[tuple[str, Any]], shapes: dict[str, list[int]]) -> None:
    """Each lora_a is rank x in and each lora_b out x rank of its base weight (out x in)."""
    for name, data in pairs:
        base = name.rsplit(".", 1)[0]
        if base not in shapes:
            raise ModelError(
                f"the base GGUF has no tensor '{base}': the adapter is for another model"
            )
        out_dim, in_dim = shapes[base]
        wanted = data.shape[1] if name.endswith("lora_a") else data.shape[0]
        if wanted != (in_dim if name.endswith("lora_a") else out_dim):
            raise ModelError(
                f"adapter tensor {name} {tuple(data.shape)} does not fit the base weight "
                f"({out_dim} x {in_dim}): the adapter was trained on another base model"
            )


_PEFT_NAME = {gguf: proj for proj, gguf in _GGUF_NAME.items()}
_GGUF_TENSOR = re.compile(r"blk\.(\d+)\.(\w+)\.weight\.lora_([ab])")


def unpermute(weights: Any, heads: int) -> Any:
    """The inverse of `permute`: llama.cpp's rotary row order back to transformers'."""
    rows = weights.shape[0]
    return (
        weights.reshape(heads, rows // heads // 2, 2, *weights.shape[1:])
        .swapaxes(1, 2)
        .reshape(weights.shape)
    )


def read_gguf_adapter(path: Path, heads: int, kv_heads: int) -> tuple[dict[str, Any], dict]:
    """A GGUF LoRA adapter (ours, or any in llama.cpp's layout) back as peft's pieces:
    (rank, alpha and target layers; tensors by peft's saved names), so that training can
    continue from a shipped `.gguf` adapter (`train fit --lora-init FILE.gguf`)."""
    import numpy as np
    import torch
    from gguf import GGUFReader

    from ragteam.llm.gguf_files import adapter_base

    adapter_base(path)  # a clear error for a model or a damaged file
    reader = GGUFReader(path)
    alpha = reader.fields.get("adapter.lora.alpha")
    tensors: dict[str, Any] = {}
    rank = 0
    for tensor in reader.tensors:
        match = _GGUF_TENSOR.fullmatch(tensor.name)
        if not match or match.group(2) not in _PEFT_NAME:
            raise ModelError(f"{path}: cannot map the adapter tensor '{tensor.name}' to a layer")
        layer, gguf_name, part = match.groups()
        proj = _PEFT_NAME[gguf_name]
        shape = [int(x) for x in reversed(tensor.shape)]
        data = np.asarray(tensor.data, dtype=np.float32).reshape(shape)
        if part == "b" and proj in ("q_proj", "k_proj"):
            data = unpermute(data, heads if proj == "q_proj" else kv_heads)
        rank = shape[0] if part == "a" else shape[1]
        section = "self_attn" if proj in ("q_proj", "k_proj", "v_proj", "o_proj") else "mlp"
        key = f"base_model.model.model.layers.{layer}.{section}.{proj}.lora_{part.upper()}.weight"
        tensors[key] = torch.from_numpy(np.ascontiguousarray(data))
    if not tensors:
        raise ModelError(f"{path} holds no LoRA tensors")
    config = {
        "r": rank,
        "lora_alpha": float(alpha.contents()) if alpha is not None else float(rank),
        "target_modules": sorted({k.split(".")[-3] for k in tensors}),
    }
    return config, tensors
