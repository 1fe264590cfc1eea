"""Tokenize a rendered trajectory and mark which tokens carry loss.

Loss only on model-generated spans: the prompt (`prompt_chars`) is masked, and so is the text
between `<retrieval>` and `</retrieval>` — the markers themselves are trained, so the model
learns to open the block, and after it to write the locator's head. A token is trained when its
first character is.

`decision_weight` weighs the token where each locator judgement is decided — the first token of
"Relevant" or "Irrelevant" after a line's "[" — in the training loss (1: as any other token)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ragteam.smart.format import RETRIEVAL_CLOSE, RETRIEVAL_OPEN

IGNORE = -100
_JUDGEMENT = re.compile(r"(?m)^\[(?=(?:Relevant|Irrelevant)\]: \[\d+\])")


def masked_spans(text: str, prompt_chars: int) -> list[tuple[int, int]]:
    """Character ranges [start, end) without loss."""
    spans = [(0, prompt_chars)]
    start = 0
    while (opened := text.find(RETRIEVAL_OPEN, start)) != -1:
        inner = opened + len(RETRIEVAL_OPEN)
        closed = text.find(RETRIEVAL_CLOSE, inner)
        end = len(text) if closed == -1 else closed
        spans.append((inner, end))
        start = end
    return spans


def trained_chars(text: str, prompt_chars: int) -> list[bool]:
    flags = [True] * len(text)
    for start, end in masked_spans(text, prompt_chars):
        for i in range(start, min(end, len(text))):
            flags[i] = False
    return flags


def decision_chars(text: str, prompt_chars: int) -> list[int]:
    """Positions of the first character of each judgement's "Relevant"/"Irrelevant" in the
    model-written part of `text`."""
    return [m.end() for m in _JUDGEMENT.finditer(text) if m.start() >= prompt_chars]


@dataclass(frozen=True)
class Tokenized:
    input_ids: list[int]
    labels: list[int]  # IGNORE where no loss
    weights: list[float] | None = None  # per position; None: every trained token weighs 1

    @property
    def trained(self) -> int:
        return sum(1 for label in self.labels if label != IGNORE)


def tokenize_example(
    tokenizer: Any, text: str, prompt_chars: int, bos: int | None, decision_weight: float = 1.0
) -> Tokenized:
    """Token ids of `text` (after `bos` if given) and labels: the id where trained; with a
    `decision_weight` other than 1, the weight of each position."""
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    flags = trained_chars(text, prompt_chars)
    ids: list[int] = list(encoded["input_ids"])
    offsets = encoded["offset_mapping"]
    labels = [
        token if start < len(flags) and flags[start] else IGNORE
        for token, (start, _end) in zip(ids, offsets, strict=True)
    ]
    weights = None
    if decision_weight != 1.0:
        weights = [1.0] * len(ids)
        for char in decision_chars(text, prompt_chars):
            # the token holding the decision's first character
            n = next((i for i, (a, b) in enumerate(offsets) if a <= char < b), None)
            if n is not None and labels[n] != IGNORE:
                weights[n] = decision_weight
    if bos is not None:
        ids, labels = [bos, *ids], [IGNORE, *labels]
        weights = None if weights is None else [1.0, *weights]
    return Tokenized(ids, labels, weights)
