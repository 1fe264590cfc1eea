"""The settings of fine-tuning MiniLM's top layers (`train rerank`, `train support`), apart
from the code that uses them: the command line reads their flags from here without torch."""

from __future__ import annotations

from dataclasses import dataclass

from ragteam.settings import flag


@dataclass(frozen=True)
class TopLayersSettings:
    """Fine-tuning the top layers and head of a MiniLM cross-encoder (`train rerank`,
    `train support`); the `flag`ged ones are those commands' flags."""

    epochs: float = flag(2.0, min=0.1, max=20)
    lr: float = flag(3e-5, min=1e-7, max=1e-2)
    head_lr: float = 1e-3
    layers: int = flag(2, "top MiniLM layers trained", min=1, max=6)
    batch: int = 4  # examples a step: retrieval blocks for the reranker, pairs for the checker
    seed: int = flag(0)
    threads: int = flag(0, "torch threads (0: default)", min=0)


RERANK = TopLayersSettings()
CHECK = TopLayersSettings(epochs=1.0, lr=5e-5, layers=3, batch=16)
