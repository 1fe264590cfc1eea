"""LoRA over the frozen base for `train fit` (peft): a fresh adapter, or one continued from
an earlier run's adapter folder or from a GGUF adapter (the shipped one included)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragteam.errors import InputError


@dataclass(frozen=True)
class LoraSettings:
    rank: int
    alpha: float
    dropout: float
    targets: tuple[str, ...]
    init: str = ""  # an adapter folder or a .gguf adapter to continue
    base: str = "embedded"  # what the model was loaded from (checked against a GGUF adapter)


def with_lora(model: Any, settings: LoraSettings) -> Any:
    """The base model frozen, with LoRA adapters on `settings.targets` (peft), or the
    adapter `settings.init` continued."""
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as exc:
        raise InputError("--lora needs peft: pip install 'ragteam[train]'") from exc
    if settings.init.endswith(".gguf"):
        return _from_gguf_adapter(model, settings)
    if settings.init:
        from peft import PeftModel

        folder = Path(settings.init)
        if not (folder / "adapter_config.json").is_file():
            raise InputError(
                f"--lora-init {folder}: neither a LoRA adapter folder (adapter_config.json) "
                "nor a .gguf adapter"
            )
        return PeftModel.from_pretrained(model, folder, is_trainable=True)
    names = {n.rsplit(".", 1)[-1] for n, _ in model.named_modules()}
    unknown = [t for t in settings.targets if t not in names]
    if unknown:
        raise InputError(f"--lora-targets {','.join(unknown)}: no such layer in the base model")
    config = LoraConfig(
        r=settings.rank,
        lora_alpha=settings.alpha,
        lora_dropout=settings.dropout,
        target_modules=list(settings.targets),
        bias="none",
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, config)


def _from_gguf_adapter(model: Any, settings: LoraSettings) -> Any:
    """Continue a GGUF LoRA adapter (e.g. the shipped one): its rank, alpha and layers, its
    weights loaded into a fresh peft model; refused over a base it was not trained on."""
    from peft import LoraConfig, get_peft_model, set_peft_model_state_dict

    from ragteam.llm.gguf_files import adapter_base, gguf_fingerprint
    from ragteam.smart.training.base_model import base_gguf
    from ragteam.smart.training.lora_export import read_gguf_adapter

    path = Path(settings.init)
    if not path.is_file():
        raise InputError(f"--lora-init {path}: no such adapter file")
    wanted, name = adapter_base(path)
    base = base_gguf(settings.base)
    if wanted and base is not None and gguf_fingerprint(base) != wanted:
        raise InputError(
            f"--lora-init {path.name} was trained on another base model ({name}), not "
            f"{base.name}: pass that model as --base"
        )
    heads = model.config.num_attention_heads
    config, tensors = read_gguf_adapter(path, heads, model.config.num_key_value_heads or heads)
    if config["r"] != settings.rank:
        raise InputError(
            f"--lora-init {path.name} has rank {config['r']}: pass --lora-rank {config['r']}"
        )
    peft_config = LoraConfig(
        r=config["r"],
        lora_alpha=config["lora_alpha"],
        lora_dropout=settings.dropout,
        target_modules=config["target_modules"],
        bias="none",
        task_type="CAUSAL_LM",
    )
    peft_model = get_peft_model(model, peft_config)
    result = set_peft_model_state_dict(peft_model, tensors)
    missing = [k for k in getattr(result, "unexpected_keys", []) if "lora_" in k]
    if missing:
        raise InputError(f"--lora-init {path.name}: tensors that fit no layer: {missing[:3]}")
    return peft_model
