"""A GGUF LoRA adapter merged into its base model once, and kept in the user's cache.

llama.cpp applies an adapter at run time as a second, low-rank product beside every adapted
weight: on the embedded 135M model the shipped agent took 3.47 s a question that way and takes
2.16 s merged (docs/benchmarks.md section 20c). Merged, the model runs as one plain GGUF. The
merge reads the base's weights (dequantized, so exactly the values llama.cpp computes with),
adds `alpha / rank * B @ A` to each adapted weight and writes it as q8_0; every other tensor and all
metadata are copied unchanged, so the merged file tokenizes and chats as the base. Re-quantizing
the adapted weights to q8_0 rounds them (about 2**-8 of their scale): the merged model is close
to base+adapter, not bit-identical, and is a model of its own in caches and run configs.

The file is named by the fingerprints of base and adapter, written aside and moved into place
(never half-written), under a lock (two processes merge once).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ragteam.common.paths import merged_models_dir
from ragteam.errors import ModelError
from ragteam.llm.gguf_files import finish_gguf, gguf_fingerprint

MERGE_VERSION = 1  # bump when the merged bytes would change: names a new cache file
OUT_TYPE = "Q8_0"


def merged_model(
    base: Path, adapter: Path, cache_dir: Path | None = None, base_fingerprint: str = ""
) -> Path:
    """The merged GGUF of `adapter` over `base`, made on first use and reused after
    (`base_fingerprint`: the base's, when the caller has it already)."""
    from filelock import FileLock

    folder = cache_dir or merged_models_dir()
    folder.mkdir(parents=True, exist_ok=True)
    base_key = base_fingerprint or gguf_fingerprint(base)
    key = f"{base_key}-{gguf_fingerprint(adapter)}-v{MERGE_VERSION}"
    out = folder / f"{base.stem}+{adapter.stem}-{key.replace(':', '_')}.gguf"
    with FileLock(str(out) + ".lock"):
        if not out.is_file():
            merge_adapter(base, adapter, out)
    return out


def _adapter_deltas(adapter: Path) -> tuple[dict[str, Any], float]:
    """(base tensor name -> (B, A) as float32 arrays, alpha) of a GGUF LoRA adapter."""
    import numpy as np
    from gguf import GGUFReader

    reader = GGUFReader(adapter)
    alpha_field = reader.fields.get("adapter.lora.alpha")
    if alpha_field is None:
        raise ModelError(f"{adapter} records no adapter.lora.alpha: re-export the adapter")
    pairs: dict[str, dict[str, Any]] = {}
    for t in reader.tensors:
        name, _, part = t.name.rpartition(".lora_")
        if part not in ("a", "b"):
            raise ModelError(f"{adapter}: unexpected tensor {t.name} in a LoRA adapter")
        pairs.setdefault(name, {})[part] = np.asarray(t.data, dtype=np.float32)
    if any(len(p) != 2 for p in pairs.values()):
        raise ModelError(f"{adapter}: a lora_a without its lora_b (or back): re-export it")
    return {n: (p["b"], p["a"]) for n, p in pairs.items()}, float(alpha_field.contents())


def merge_adapter(base: Path, adapter: Path, out: Path) -> Path:
    """Write base + adapter as one GGUF at `out` (see the module's docstring)."""
    import numpy as np
    from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType, GGUFWriter, Keys
    from gguf.quants import QuantError, dequantize, quantize

    deltas, alpha = _adapter_deltas(adapter)
    reader = GGUFReader(base)
    arch = str(reader.fields[Keys.General.ARCHITECTURE].contents())
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    writer = GGUFWriter(str(tmp), arch)
    for field in reader.fields.values():
        if field.name == Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue  # written by GGUFWriter itself
        kind = field.types[0]
        sub = field.types[-1] if kind == GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), kind, sub_type=sub)
    q8 = getattr(GGMLQuantizationType, OUT_TYPE)
    for t in reader.tensors:
        pair = deltas.pop(t.name, None)
        if pair is None:
            writer.add_tensor(t.name, t.data, raw_dtype=t.tensor_type)
            continue
        b, a = pair
        weight = dequantize(t.data, t.tensor_type).astype(np.float32)
        delta = (alpha / a.shape[0]) * (b @ a)
        if delta.shape != weight.shape:
            raise ModelError(
                f"{adapter}: {t.name} adapts a {weight.shape} weight with a {delta.shape} "
                "update: the adapter belongs to another base model"
            )
        try:
            merged = quantize(weight + delta, q8)
        except QuantError as exc:  # rows not a multiple of q8_0's block: another architecture
            raise ModelError(
                f"{t.name} of {base.name} cannot be written as {OUT_TYPE} ({exc}): "
                "apply the adapter at run time instead (--apply-lora)"
            ) from exc
        writer.add_tensor(t.name, merged, raw_dtype=q8)
    if deltas:
        raise ModelError(
            f"{adapter} adapts tensors {base.name} does not have ({sorted(deltas)[:3]}...): "
            "it belongs to another base model"
        )
    return finish_gguf(writer, tmp, out)
