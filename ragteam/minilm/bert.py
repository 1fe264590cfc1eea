"""The installed MiniLM's sentence embedding in plain torch: BERT's forward pass (six layers), mean
pooling over the real tokens and unit length, as sentence-transformers computes
all-MiniLM-L6-v2, read from the package's `model.safetensors` and tokenized by `tokenizers`.
Loading it imports torch alone (this module is imported only when an encoder is made): a sync
that embeds one changed passage no longer spends seconds importing sentence-transformers and
transformers."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file
from tokenizers import Tokenizer


class MiniLM:
    """`embed(texts)`: unit-length mean-pooled vectors, `max_length` tokens at most a text."""

    def __init__(self, folder: Path, max_length: int) -> None:
        self.config = json.loads((folder / "config.json").read_text("utf-8"))
        raw = load_file(str(folder / "model.safetensors"))
        self.weights = {k.removeprefix("bert."): v.float() for k, v in raw.items()}
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=max_length)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def embed(self, texts: list[str]) -> np.ndarray:
        encoded = self.tokenizer.encode_batch(texts)
        ids = torch.tensor([e.ids for e in encoded], dtype=torch.long)
        mask = torch.tensor([e.attention_mask for e in encoded], dtype=torch.float32)
        types = torch.tensor([e.type_ids for e in encoded], dtype=torch.long)
        with torch.inference_mode():
            hidden = self._forward(ids, mask, types)
            summed = (hidden * mask[:, :, None]).sum(dim=1)
            pooled = summed / mask.sum(dim=1, keepdim=True).clamp(min=1e-9)
            unit = torch.nn.functional.normalize(pooled, p=2, dim=1)
        return unit.numpy().astype(np.float32)

    def _forward(self, ids: Any, mask: Any, types: Any) -> Any:
        w, eps = self.weights, self.config["layer_norm_eps"]
        norm = torch.nn.functional.layer_norm
        positions = torch.arange(ids.shape[1])[None, :]
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][positions]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        x = norm(
            x, x.shape[-1:], w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps
        )
        bias = (1.0 - mask)[:, None, None, :] * torch.finfo(torch.float32).min
        for n in range(self.config["num_hidden_layers"]):
            x = self._layer(x, bias, f"encoder.layer.{n}.")
        return x

    def _layer(self, x: Any, bias: Any, at: str) -> Any:
        w, eps = self.weights, self.config["layer_norm_eps"]
        functional = torch.nn.functional
        heads = self.config["num_attention_heads"]
        batch, tokens, width = x.shape

        def linear(name: str, value: Any) -> Any:
            return functional.linear(value, w[f"{at}{name}.weight"], w[f"{at}{name}.bias"])

        def split(value: Any) -> Any:
            return value.view(batch, tokens, heads, width // heads).transpose(1, 2)

        q, k, v = (split(linear(f"attention.self.{n}", x)) for n in ("query", "key", "value"))
        scores = q @ k.transpose(-1, -2) / math.sqrt(width // heads) + bias
        context = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(batch, tokens, width)
        ln = f"{at}attention.output.LayerNorm."
        x = functional.layer_norm(
            linear("attention.output.dense", context) + x,
            (width,),
            w[ln + "weight"],
            w[ln + "bias"],
            eps,
        )
        inner = functional.gelu(linear("intermediate.dense", x))
        ln = f"{at}output.LayerNorm."
        return functional.layer_norm(
            linear("output.dense", inner) + x, (width,), w[ln + "weight"], w[ln + "bias"], eps
        )
