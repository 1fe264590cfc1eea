"""The model that training starts from: the embedded GGUF (loaded into transformers, nothing
downloaded), another GGUF file, or a local Hugging Face folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragteam.errors import InputError, ModelError


def base_gguf(spec: str) -> Path | None:
    """The GGUF file a base spec names (None for an HF folder)."""
    from ragteam.llm import ALIASES

    if ALIASES.get(spec) == "embedded":
        from ragteam.llm.llamacpp import embedded_model_path

        return embedded_model_path()
    path = Path(spec).expanduser()
    if path.suffix == ".gguf":
        if not path.is_file():
            raise InputError(f"no GGUF file at {path}")
        return path
    if not (path / "config.json").is_file():
        raise InputError(
            f"--base {spec}: expected 'embedded', a .gguf file or a local Hugging Face folder "
            "with config.json (nothing is downloaded)"
        )
    return trained_from(path)


def trained_from(folder: Path) -> Path | None:
    """For a model folder that `train fit` wrote (`RUN/model`), the GGUF its run started from,
    following runs that continued earlier runs; None for any other folder."""
    settings = folder.parent / "settings.json"
    if folder.name != "model" or not settings.is_file():
        return None
    base = json.loads(settings.read_text(encoding="utf-8")).get("base")
    if not isinstance(base, str) or Path(base).expanduser().resolve() == folder.resolve():
        return None
    return base_gguf(base)


def gguf_adds_bos(path: Path) -> bool:
    """Whether llama.cpp puts a BOS token before a prompt for this GGUF."""
    from gguf import GGUFReader

    field = GGUFReader(path).fields.get("tokenizer.ggml.add_bos_token")
    return bool(field.contents()) if field is not None else False


def load_base(spec: str) -> tuple[Any, Any, int | None]:
    """(model in fp32, fast tokenizer, BOS id to prepend or None)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = base_gguf(spec)
    try:
        if gguf is None:
            model = AutoModelForCausalLM.from_pretrained(
                spec, local_files_only=True, dtype=torch.float32
            )
            tokenizer = AutoTokenizer.from_pretrained(spec, local_files_only=True)
            bos = tokenizer.bos_token_id if getattr(tokenizer, "add_bos_token", False) else None
        else:
            folder, name = str(gguf.parent), gguf.name
            model = AutoModelForCausalLM.from_pretrained(
                folder, gguf_file=name, dtype=torch.float32
            )
            tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
            bos = tokenizer.bos_token_id if gguf_adds_bos(gguf) else None
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(
            f"could not load the base model '{spec}' into transformers: {exc}"
        ) from exc
    # The weights were dequantized to fp32 on load: a plain model from here on, which trains
    # and saves like any other.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer, bos
