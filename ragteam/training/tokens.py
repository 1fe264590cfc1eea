"""Tokenize a rendered trajectory and mark which tokens carry loss.

Loss only on model-generated spans: the prompt (`prompt_chars`) is masked, and so is the text
between `<retrieval>` and `</retrieval>` — the markers themselves are trained, so the model
learns to open the block, and after it to write the locator's head. A token is trained when its
first character is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragteam.agents.smart_format import RETRIEVAL_CLOSE, RETRIEVAL_OPEN

IGNORE = -100


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


@dataclass(frozen=True)
class Tokenized:
    input_ids: list[int]
    labels: list[int]  # IGNORE where no loss

    @property
    def trained(self) -> int:
        return sum(1 for label in self.labels if label != IGNORE)


def tokenize_example(tokenizer: Any, text: str, prompt_chars: int, bos: int | None) -> Tokenized:
    """Token ids of `text` (after `bos` if given) and labels: the id where trained."""
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    flags = trained_chars(text, prompt_chars)
    ids: list[int] = list(encoded["input_ids"])
    labels = [
        token if start < len(flags) and flags[start] else IGNORE
        for token, (start, _end) in zip(ids, encoded["offset_mapping"], strict=True)
    ]
    if bos is not None:
        ids, labels = [bos, *ids], [IGNORE, *labels]
    return Tokenized(ids, labels)
