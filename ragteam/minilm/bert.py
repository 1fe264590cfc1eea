"""The installed MiniLM in plain torch: BERT's six layers (`Bert`, a torch module whose tensors
carry the names transformers gives them, so weights files and training address them as before),
and the sentence embedding sentence-transformers computes for all-MiniLM-L6-v2 on top (`MiniLM`:
mean pooling over the real tokens, unit length), read from the package's `model.safetensors`.

Loading it imports torch alone (this module is imported only when a model is made): embedding
one changed passage, or starting a server's span reader, no longer spends seconds importing
transformers' BERT (`tests/test_minilm_bert.py` holds both to transformers' and
sentence-transformers' outputs)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file
from torch import nn
from torch.nn import functional

UNUSED = ("pooler.", "embeddings.position_ids")  # tensors of the file no reading uses


@dataclass(frozen=True)
class Hidden:
    """What a forward pass gives: the last layer's vector of every token (batch x tokens x
    width), as transformers names it."""

    last_hidden_state: Any


class _Embeddings(nn.Module):
    def __init__(self, c: SimpleNamespace) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden_size, padding_idx=0)
        self.position_embeddings = nn.Embedding(c.max_position_embeddings, c.hidden_size)
        self.token_type_embeddings = nn.Embedding(c.type_vocab_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.dropout = nn.Dropout(c.hidden_dropout_prob)

    def forward(self, ids: Any, types: Any) -> Any:
        positions = torch.arange(ids.shape[1], device=ids.device)[None, :]
        x = (
            self.word_embeddings(ids)
            + self.position_embeddings(positions)
            + self.token_type_embeddings(types)
        )
        return self.dropout(self.LayerNorm(x))


class _Dense(nn.Module):
    """A linear map, dropout, the residual added and LayerNorm (BERT's two output blocks)."""

    def __init__(self, inner: int, width: int, c: SimpleNamespace) -> None:
        super().__init__()
        self.dense = nn.Linear(inner, width)
        self.LayerNorm = nn.LayerNorm(width, eps=c.layer_norm_eps)
        self.dropout = nn.Dropout(c.hidden_dropout_prob)

    def forward(self, x: Any, residual: Any) -> Any:
        return self.LayerNorm(self.dropout(self.dense(x)) + residual)


class _SelfAttention(nn.Module):
    def __init__(self, c: SimpleNamespace) -> None:
        super().__init__()
        self.heads, self.dropout = c.num_attention_heads, c.attention_probs_dropout_prob
        self.query, self.key, self.value = (nn.Linear(c.hidden_size, c.hidden_size) for _ in "qkv")

    def forward(self, x: Any, bias: Any) -> Any:
        batch, tokens, width = x.shape

        def split(value: Any) -> Any:
            return value.view(batch, tokens, self.heads, width // self.heads).transpose(1, 2)

        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        dropout = self.dropout if self.training else 0.0
        context = functional.scaled_dot_product_attention(q, k, v, bias, dropout_p=dropout)
        return context.transpose(1, 2).reshape(batch, tokens, width)


class _Attention(nn.Module):
    def __init__(self, c: SimpleNamespace) -> None:
        super().__init__()
        self.self = _SelfAttention(c)
        self.output = _Dense(c.hidden_size, c.hidden_size, c)


class _Intermediate(nn.Module):
    def __init__(self, c: SimpleNamespace) -> None:
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.intermediate_size)


class _Layer(nn.Module):
    def __init__(self, c: SimpleNamespace) -> None:
        super().__init__()
        self.attention = _Attention(c)
        self.intermediate = _Intermediate(c)
        self.output = _Dense(c.intermediate_size, c.hidden_size, c)

    def forward(self, x: Any, bias: Any) -> Any:
        x = self.attention.output(self.attention.self(x, bias), x)
        return self.output(functional.gelu(self.intermediate.dense(x)), x)


class _Encoder(nn.Module):
    def __init__(self, c: SimpleNamespace) -> None:
        super().__init__()
        self.layer = nn.ModuleList(_Layer(c) for _ in range(c.num_hidden_layers))


class Bert(nn.Module):
    """BERT without its pooler: `model(input_ids=..., attention_mask=..., token_type_ids=...)`
    gives `Hidden`; `config` holds the model's config.json fields."""

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__()
        self.config = SimpleNamespace(**config)
        self.embeddings = _Embeddings(self.config)
        self.encoder = _Encoder(self.config)

    @classmethod
    def installed(cls, folder: Path) -> Bert:
        """The model in `folder` (config.json, model.safetensors), ready to read (eval mode)."""
        model = cls(json.loads((folder / "config.json").read_text("utf-8")))
        raw = load_file(str(folder / "model.safetensors"))
        tensors = {
            name: value.float()
            for key, value in raw.items()
            if not (name := key.removeprefix("bert.")).startswith(UNUSED)
        }
        model.load_state_dict(tensors, strict=True)
        return model.eval()

    def forward(
        self, input_ids: Any, attention_mask: Any = None, token_type_ids: Any = None
    ) -> Hidden:
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        x = self.embeddings(input_ids, token_type_ids)
        # padding tokens are attended to by nothing (an additive -inf-like bias per key)
        bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for layer in self.encoder.layer:
            x = layer(x, bias)
        return Hidden(x)


class MiniLM:
    """`embed(texts)`: unit-length mean-pooled vectors, `max_length` tokens at most a text."""

    def __init__(self, folder: Path, max_length: int) -> None:
        from tokenizers import Tokenizer

        self.model = Bert.installed(folder)
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=max_length)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def embed(self, texts: list[str]) -> np.ndarray:
        encoded = self.tokenizer.encode_batch(texts)
        ids = torch.tensor([e.ids for e in encoded], dtype=torch.long)
        mask = torch.tensor([e.attention_mask for e in encoded], dtype=torch.long)
        types = torch.tensor([e.type_ids for e in encoded], dtype=torch.long)
        with torch.inference_mode():
            hidden = self.model(ids, mask, types).last_hidden_state
            weights = mask[:, :, None].float()
            pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
            unit = functional.normalize(pooled, p=2, dim=1)
        return unit.numpy().astype(np.float32)
