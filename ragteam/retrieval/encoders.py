"""Passage encoders for dense retrieval: MiniLM in PyTorch, the same weights in ONNX Runtime
(float or int8, exported from the installed weights, never downloaded), or a server's
OpenAI-compatible `/v1/embeddings`. Each returns unit-length float32 rows."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ragteam.common.once import loaded_once
from ragteam.common.paths import embedding_model_dir
from ragteam.errors import InputError
from ragteam.settings import flag

EncodeProgress = Callable[[int, int], None]
LOCAL_BACKENDS = ("torch", "onnx", "onnx-int8")
CHUNK = 256  # texts per progress step (sorted by length first, so batches pad little)


class Encoder(Protocol):
    identity: str  # recorded in the manifest; a different identity makes the index stale
    spec: dict[str, Any]  # enough to rebuild this encoder when the index is loaded

    def encode(self, texts: list[str], progress: EncodeProgress | None = None) -> np.ndarray: ...


@dataclass(frozen=True)
class EncoderSpec:
    """Which encoder: `backend` torch | onnx | onnx-int8 | server; a server also needs
    `model` and `base_url`."""

    backend: str = flag(
        "torch",
        "torch | onnx | onnx-int8 | openai:MODEL (with --embed-url) | an installed encoder "
        "plugin's name",
        name="--encoder",
    )
    model: str = ""
    base_url: str = flag(
        "", "OpenAI-compatible server for openai:MODEL embeddings", name="--embed-url"
    )
    batch: int = flag(64, "texts per request", min=1, max=4096, name="--embed-batch")
    concurrency: int = 4

    @classmethod
    def parse(
        cls, text: str, base_url: str = "", batch: int = 64, known: list[str] | None = None
    ) -> EncoderSpec:
        """`torch`, `onnx`, `onnx-int8` or `openai:MODEL` (served at `base_url`); `known`
        names the backends an unknown name's error lists."""
        if text in LOCAL_BACKENDS:
            return cls(text)
        if text.startswith("openai:") and len(text) > len("openai:"):
            if not base_url:
                raise InputError(
                    f"--encoder {text} needs --embed-url (e.g. http://127.0.0.1:8080/v1)"
                )
            return cls("server", text.removeprefix("openai:"), base_url.rstrip("/"), batch)
        from ragteam.errors import UnknownName

        raise UnknownName("encoder", text, [*(known or LOCAL_BACKENDS), "openai:MODEL"])

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"backend": self.backend}
        if self.backend == "server":
            data |= {"model": self.model, "base_url": self.base_url}
        return data


@loaded_once(maxsize=1)
def weights_fingerprint() -> str:
    """Name plus a hash of the weight file sizes: changes when the installed weights change."""
    folder = embedding_model_dir()
    files = [p for p in folder.rglob("*") if p.is_file()]
    sizes = sorted((p.relative_to(folder).as_posix(), p.stat().st_size) for p in files)
    digest = hashlib.sha256(repr(sizes).encode()).hexdigest()[:12]
    return f"sentence-transformers/all-MiniLM-L6-v2@{digest}"


def length_sorted(
    texts: list[str],
    encode_chunk: Callable[[list[str]], np.ndarray],
    progress: EncodeProgress | None,
) -> np.ndarray:
    """Encode longest first in chunks (batches pad to similar lengths), rows in input order."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    out: np.ndarray | None = None
    for start in range(0, len(texts), CHUNK):
        chosen = order[start : start + CHUNK]
        block = encode_chunk([texts[i] for i in chosen])
        if out is None:
            out = np.zeros((len(texts), block.shape[1]), dtype="float32")
        out[chosen] = block
        if progress:
            progress(min(start + CHUNK, len(texts)), len(texts))
    return out if out is not None else np.zeros((0, 0), dtype="float32")


class TorchEncoder:
    """The installed all-MiniLM-L6-v2 in torch (`ragteam.minilm.bert`: BERT, mean pooling, unit
    length, as sentence-transformers computes it, within 2e-7; without importing it, which
    took most of a one-file sync's seconds): the reference."""

    spec = EncoderSpec("torch").to_json()

    def __init__(self) -> None:
        self.identity = weights_fingerprint()
        self._model = _minilm()

    def encode(self, texts: list[str], progress: EncodeProgress | None = None) -> np.ndarray:
        def chunk(batch: list[str]) -> np.ndarray:
            return np.concatenate(
                [self._model.embed(batch[i : i + 32]) for i in range(0, len(batch), 32)]
            )

        return length_sorted(texts, chunk, progress)


@loaded_once(maxsize=1)
def _minilm():  # noqa: ANN202 - imported lazily (torch is slow to import)
    from ragteam.minilm.bert import MiniLM

    folder = embedding_model_dir()
    return MiniLM(folder, max_seq_length(folder))


def max_seq_length(folder: Path) -> int:
    config = folder / "sentence_bert_config.json"
    if config.is_file():
        return int(json.loads(config.read_text(encoding="utf-8")).get("max_seq_length", 256))
    return 256
