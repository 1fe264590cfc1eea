"""The span reader's network in ONNX Runtime (issue 89: the reader at less CPU, the same
answers): the encoder and both heads exported in float32 from the loaded weights, once per
weights file, into the cache folder (no download); the masking stays here, as `SpanNet.logits`
does it. Used when ONNX Runtime is installed (`pip install 'ragteam[onnx]'`), unless
RAGTEAM_READER_RUNTIME=torch says otherwise; the reader's identity names the runtime."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ragteam.paths import readers_dir
from ragteam.reader.model import SpanNet, Windows

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
RUNTIMES = ("torch", "onnx")


def wanted_runtime() -> str:
    """The runtime asked for (RAGTEAM_READER_RUNTIME: torch | onnx), else onnx when ONNX
    Runtime is installed, else torch."""
    asked = os.environ.get("RAGTEAM_READER_RUNTIME", "").strip().lower()
    if asked:
        if asked not in RUNTIMES:
            from ragteam.errors import InputError

            raise InputError(
                f"RAGTEAM_READER_RUNTIME={asked!r} is not a reader runtime: use one of "
                f"{', '.join(RUNTIMES)}"
            )
        return asked
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return "torch"
    return "onnx"


class OnnxSpanNet:
    """`SpanNet.logits` run by ONNX Runtime over the same windows (tokenized by the torch net's
    tokenizer); outputs are torch tensors, as the torch net's are."""

    def __init__(self, net: SpanNet, digest: str, threads: int | None = None) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or os.cpu_count() or 1
        options.log_severity_level = 3
        path = exported(net, digest)
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def logits(self, windows: Windows) -> tuple[Any, Any, Any]:
        import torch

        feeds = {
            name: windows.inputs[name].cpu().numpy().astype(np.int64)
            for name in INPUTS
            if name in windows.inputs
        }
        if "token_type_ids" not in feeds:
            feeds["token_type_ids"] = np.zeros_like(feeds["input_ids"])
        start, end, extra = (torch.from_numpy(a) for a in self._session.run(None, feeds))
        mask = torch.tensor(windows.context, dtype=torch.bool)
        return start.masked_fill(~mask, -1e4), end.masked_fill(~mask, -1e4), extra


def exported(net: SpanNet, digest: str) -> Path:
    """The ONNX file of `net` (weights `digest`), exported on first use under a file lock."""
    from filelock import FileLock

    folder = readers_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"reader-{digest}.onnx"
    with FileLock(str(folder / ".lock")):
        if not target.is_file():
            _export(net, target)
    return target


def _export(net: SpanNet, target: Path) -> None:
    import torch

    class Heads(torch.nn.Module):
        """The encoder and both heads, unmasked: start, end (windows x tokens), extras."""

        def __init__(self) -> None:
            super().__init__()
            self.encoder, self.span, self.extra = net.encoder, net.span, net.extra

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001, ANN202
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            start, end = self.span(hidden).unbind(-1)
            return start, end, self.extra(hidden[:, 0])

    model = Heads().eval()
    ids = torch.ones((2, 16), dtype=torch.long)
    axes = {name: {0: "windows", 1: "tokens"} for name in (*INPUTS, "start", "end")}
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        path = Path(tmp) / target.name
        with torch.no_grad():
            torch.onnx.export(
                model,
                (ids, torch.ones_like(ids), torch.zeros_like(ids)),
                str(path),
                input_names=list(INPUTS),
                output_names=["start", "end", "extra"],
                dynamic_axes={**axes, "extra": {0: "windows"}},
                opset_version=17,
                dynamo=False,
            )
        os.replace(path, target)
