"""The yes/no decider: is the answer to this yes/no question "yes", given the passage around
the sentence the question is about?

A MiniLM cross-encoder (`ragteam.minilm.cross_encoder`) reads the question beside that
context; a one-number head on its [CLS] vector gives the logit of "yes". It is trained on
questions people asked (BoolQ's natural yes/no questions over Wikipedia, and docqa-train's
yes/no questions over manuals: `ragteam train yesno`, ragteam/reader/training/yesno.py), in
place of hand rules that read "Default: no" or a negation as the answer. The weights file holds
only what training changed (fp16). A reader uses the decider that stands beside its weights
(`NAME.yesno.safetensors`); none ships: the one trained on 2 CPU cores answered the validation
files' yes/no questions worse than the rules (docs/benchmarks.md §73)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragteam.minilm.cross_encoder import CrossEncoder, Weights, load_fresh, sigmoid

MAX_TOKENS = 256  # question + context, in MiniLM word pieces
BEFORE = 300  # characters of context before the sentence the question is about
AFTER = 700  # and after it (the tokenizer cuts what does not fit)
FORMAT = "ragteam-yesno-v1"
DECIDER = Weights("yes/no decider", "ragteam train yesno", FORMAT)


def context(text: str, start: int, end: int) -> str:
    """The part of `text` a decision reads: BEFORE characters before `start` (from a word's
    beginning) to AFTER characters after `end`."""
    a = max(0, start - BEFORE)
    if a > 0 and (space := text.find(" ", a, start)) != -1:
        a = space + 1
    return text[a : min(len(text), end + AFTER)].strip()


def decider_path(weights: Path) -> Path:
    """The decider that goes with the reader `weights` (its sidecar `NAME.yesno.safetensors`)."""
    return weights.with_name(weights.name.removesuffix(".safetensors") + ".yesno.safetensors")


def decider_model(threads: int | None = None) -> CrossEncoder:
    return CrossEncoder(MAX_TOKENS, threads)


@dataclass(frozen=True)
class Decider:
    """P(yes) for a yes/no question over a context; `identity` names the file and its hash."""

    model: Any
    identity: str

    def yes(self, question: str, around: str) -> float:
        import torch

        with torch.inference_mode():
            logit = self.model.forward(self.model.batch([question], [around or "."]))
        return sigmoid(float(logit[0]))


def load_decider(path: Path, threads: int | None = None) -> Decider:
    """The decider at `path`, loaded once per process (again when the file changes); a missing
    or foreign file is an InputError saying what to do."""
    missing = f"no yes/no decider at {path}: train one with `ragteam train yesno`"
    loaded = load_fresh(path, missing, decider_model, DECIDER, threads)
    return Decider(loaded.model, f"{path.name}:{loaded.digest}")
