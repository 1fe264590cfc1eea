"""Export a fine-tuned model as a GGUF that llama.cpp runs at the base model's speed.

The base GGUF supplies everything but the weights (architecture, hyperparameters, tokenizer and
chat template), so the exported file tokenizes exactly as the base. Weights come from the trained
transformers model, renamed to llama.cpp's tensor names, with the Q/K row permutation that
llama.cpp's converter applies (transformers undoes it when it loads a GGUF), written as f16 or
q8_0 (1-D norms stay f32). Only the `llama` architecture (SmolLM2, Llama) is supported.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ragteam.errors import ModelError
from ragteam.llm.gguf_files import finish_gguf

SUPPORTED = ("llama",)
TYPES = ("f16", "q8_0", "f32")
_LAYER = {
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
_GLOBAL = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
    "output.weight": "lm_head.weight",
}


def hf_name(gguf_name: str) -> str:
    """The transformers parameter that a llama.cpp tensor holds."""
    if gguf_name in _GLOBAL:
        return _GLOBAL[gguf_name]
    match = re.fullmatch(r"blk\.(\d+)\.(\w+)\.weight", gguf_name)
    if not match or match.group(2) not in _LAYER:
        raise ModelError(f"cannot map the GGUF tensor '{gguf_name}' to a transformers weight")
    return f"model.layers.{match.group(1)}.{_LAYER[match.group(2)]}.weight"


def permute(weights: Any, heads: int) -> Any:
    """llama.cpp's ordering of rotary Q/K rows (from interleaved halves to pairs)."""
    rows = weights.shape[0]
    return (
        weights.reshape(heads, 2, rows // heads // 2, *weights.shape[1:])
        .swapaxes(1, 2)
        .reshape(weights.shape)
    )


def export_gguf(state: dict[str, Any], base: Path, out: Path, out_type: str = "q8_0") -> Path:
    """Write `state` (a transformers state dict) as a GGUF shaped like `base`."""
    import numpy as np
    from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType, GGUFWriter, LlamaFileType
    from gguf.quants import quantize

    if out_type not in TYPES:
        raise ModelError(f"unknown GGUF type '{out_type}'; types: {', '.join(TYPES)}")
    reader = GGUFReader(base)
    arch = str(reader.fields["general.architecture"].contents())
    if arch not in SUPPORTED:
        raise ModelError(
            f"cannot export architecture '{arch}' to GGUF; supported: {', '.join(SUPPORTED)}. "
            "Use llama.cpp's convert_hf_to_gguf.py on the saved model folder instead"
        )
    heads = int(reader.fields[f"{arch}.attention.head_count"].contents())
    kv_heads = int(reader.fields[f"{arch}.attention.head_count_kv"].contents())
    qtype = {
        "f16": GGMLQuantizationType.F16,
        "q8_0": GGMLQuantizationType.Q8_0,
        "f32": GGMLQuantizationType.F32,
    }[out_type]
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    writer = GGUFWriter(tmp, arch)
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name in ("general.architecture", "general.file_type"):
            continue
        vtype = field.types[0]
        sub = field.types[-1] if vtype == GGUFValueType.ARRAY else None
        writer.add_key_value(name, field.contents(), vtype, sub_type=sub)
    writer.add_file_type(
        {"f16": LlamaFileType.MOSTLY_F16, "q8_0": LlamaFileType.MOSTLY_Q8_0}.get(
            out_type, LlamaFileType.ALL_F32
        )
    )
    for tensor in reader.tensors:
        key = hf_name(tensor.name)
        if key not in state and key == "lm_head.weight":
            key = "model.embed_tokens.weight"
        if key not in state:
            raise ModelError(f"the trained model has no weight '{key}' for '{tensor.name}'")
        data = state[key].detach().float().cpu().numpy()
        if ".attn_q." in tensor.name:
            data = permute(data, heads)
        elif ".attn_k." in tensor.name:
            data = permute(data, kv_heads)
        data = np.ascontiguousarray(data, dtype=np.float32)
        if data.ndim == 1 or qtype == GGMLQuantizationType.F32:
            writer.add_tensor(tensor.name, data)
        elif qtype == GGMLQuantizationType.F16:
            writer.add_tensor(tensor.name, data.astype(np.float16))
        else:
            writer.add_tensor(tensor.name, quantize(data, qtype), raw_dtype=qtype)
    return finish_gguf(writer, tmp, out)


def export_folder(model_dir: Path, base: Path, out: Path, out_type: str = "q8_0") -> Path:
    """Export a saved transformers model folder (`train fit`'s `model/`)."""
    from transformers import AutoModelForCausalLM

    if not (model_dir / "config.json").is_file():
        raise ModelError(f"no trained model in {model_dir}: run `ragteam train fit` first")
    if out.is_dir():
        raise ModelError(f"--out {out} is a folder; name the .gguf file to write")
    try:
        model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ModelError(f"could not load the trained model in {model_dir}: {exc}") from exc
    return export_gguf(model.state_dict(), base, out, out_type)
