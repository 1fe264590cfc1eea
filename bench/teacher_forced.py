"""Shared by the bench scripts that read the trained agent teacher-forced on training
trajectories (locator_margin.py): their arguments and llama.cpp over the
embedded GGUF with an adapter, keeping the logits of every position."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def arguments(doc: str, threads: int) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("data", type=Path, help="a `train build` folder")
    parser.add_argument("--adapter", type=Path, required=True)
    parser.add_argument("--threads", type=int, default=threads)
    return parser


def agent(adapter: Path, threads: int, every_logit: bool = True) -> Any:
    """The embedded model with `adapter`, as inference runs it; `every_logit` keeps the logits
    of every position (else the last one only: the output layer is most of a 135M model's
    work, so reading one position is several times faster)."""
    from llama_cpp import Llama

    from ragteam.llm.llamacpp import embedded_model_path

    return Llama(
        model_path=str(embedded_model_path()),
        lora_path=str(adapter),
        n_ctx=4096,
        n_threads=threads,
        logits_all=every_logit,
        verbose=False,
    )
