"""MiniLM in ONNX Runtime: exported once from the installed PyTorch weights into the user's
cache folder (no download), optionally int8-quantized (dynamic, weights only)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from ragteam.common.paths import encoders_dir
from ragteam.errors import IndexUnusable
from ragteam.retrieval.encoders import (
    EncodeProgress,
    EncoderSpec,
    embedding_model_dir,
    length_sorted,
    max_seq_length,
    weights_fingerprint,
)

BATCH = 32


def _need_onnxruntime():  # noqa: ANN202 - the module
    try:
        import onnxruntime
    except ImportError as exc:
        raise IndexUnusable(
            "the onnx encoders need ONNX Runtime: `pip install 'ragteam[onnx]'`"
        ) from exc
    return onnxruntime


def export_dir() -> Path:
    tag = weights_fingerprint().rpartition("@")[2]
    return encoders_dir() / f"all-MiniLM-L6-v2-{tag}"


def exported_model(int8: bool) -> Path:
    """The ONNX file, exported (and quantized) on first use under a file lock."""
    from filelock import FileLock

    folder = export_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / ("model-int8-per-channel.onnx" if int8 else "model.onnx")
    with FileLock(str(folder / ".lock")):
        if not (folder / "model.onnx").is_file():
            _export_float(folder / "model.onnx")
        if int8 and not target.is_file():
            _quantize(folder / "model.onnx", target)
    return target


def _export_float(target: Path) -> None:
    import torch
    from transformers import AutoModel

    class Hidden(torch.nn.Module):
        """The encoder's last hidden state, inputs by name (forward signatures move)."""

        def __init__(self) -> None:
            super().__init__()
            self.bert = AutoModel.from_pretrained(str(embedding_model_dir())).eval()

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001, ANN202
            return self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    model = Hidden().eval()
    ids = torch.ones((2, 16), dtype=torch.long)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        path = Path(tmp) / target.name
        with torch.no_grad():
            torch.onnx.export(
                model,
                (ids, torch.ones_like(ids), torch.zeros_like(ids)),
                str(path),
                input_names=["input_ids", "attention_mask", "token_type_ids"],
                output_names=["last_hidden_state"],
                dynamic_axes={
                    name: {0: "batch", 1: "tokens"}
                    for name in (
                        "input_ids",
                        "attention_mask",
                        "token_type_ids",
                        "last_hidden_state",
                    )
                },
                opset_version=17,
                dynamo=False,
            )
        os.replace(path, target)


def _quantize(source: Path, target: Path) -> None:
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise IndexUnusable("int8 quantization needs `pip install 'ragteam[onnx]'`") from exc
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        path = Path(tmp) / target.name
        quantize_dynamic(str(source), str(path), weight_type=QuantType.QInt8, per_channel=True)
        os.replace(path, target)


class OnnxEncoder:
    def __init__(self, *, int8: bool) -> None:
        ort = _need_onnxruntime()
        from transformers import AutoTokenizer

        backend = "onnx-int8" if int8 else "onnx"
        self.spec = EncoderSpec(backend).to_json()
        # the quantization scheme is part of the identity: vectors change with it
        self.identity = f"{weights_fingerprint()}+{backend}" + ("/per-channel" if int8 else "")
        folder = embedding_model_dir()
        self._tokenizer = AutoTokenizer.from_pretrained(str(folder))
        self._max_length = max_seq_length(folder)
        options = ort.SessionOptions()
        options.intra_op_num_threads = os.cpu_count() or 1
        options.log_severity_level = 3
        self._session = ort.InferenceSession(
            str(exported_model(int8)), options, providers=["CPUExecutionProvider"]
        )

    def encode(self, texts: list[str], progress: EncodeProgress | None = None) -> np.ndarray:
        def chunk(batch: list[str]) -> np.ndarray:
            return np.concatenate(
                [self._batch(batch[i : i + BATCH]) for i in range(0, len(batch), BATCH)]
            )

        return length_sorted(texts, chunk, progress)

    def _batch(self, texts: list[str]) -> np.ndarray:
        encoded = self._tokenizer(
            texts, padding=True, truncation=True, max_length=self._max_length, return_tensors="np"
        )
        feeds = {
            "input_ids": encoded["input_ids"].astype(np.int64),
            "attention_mask": encoded["attention_mask"].astype(np.int64),
            "token_type_ids": encoded.get(
                "token_type_ids", np.zeros_like(encoded["input_ids"])
            ).astype(np.int64),
        }
        (hidden,) = self._session.run(["last_hidden_state"], feeds)
        mask = feeds["attention_mask"][:, :, None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
