"""SMART's four roles for modular inference: each is a prompt, a JSON schema and a check."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from ragteam.agents.role import Players, Role, object_of, strings
from ragteam.agents.views import json_field
from ragteam.common.metrics import f1_score
from ragteam.retrieval import Index, retrieve_traced
from ragteam.trace import Trace
from ragteam.types import Passage, Retrieved

INTENTS_SCHEMA = object_of(("intents",), intents=strings(1, 120, max_items=4, min_items=1))
LOCATOR_SCHEMA = {
    "type": "object",
    "properties": {"relevant": {"type": "boolean"}, "fact": {"type": "string", "maxLength": 400}},
    "required": ["relevant", "fact"],
}
GENERATOR_SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "maxLength": 100},
        "citations": {"type": "array", "items": {"type": "integer"}, "maxItems": 8},
    },
    "required": ["answer", "citations"],
}

RECONSTRUCTOR = Role(
    "reconstructor", "smart_reconstructor", INTENTS_SCHEMA, 96, slots=("question",)
)
LOCATOR = Role(
    "locator", "smart_locator", LOCATOR_SCHEMA, 96, slots=("question", "number", "title", "text")
)
GENERATOR = Role(
    "generator",
    "smart_generator",
    GENERATOR_SCHEMA,
    64,
    view=json_field("answer"),
    slots=("facts", "question"),
)
# with no facts the generator answers from the request alone: from the model's own knowledge,
# like its worked example (so not grounded)
GENERATOR_DIRECT = replace(GENERATOR, prompt="smart_direct", grounded=False, slots=("question",))
ROLES = (RECONSTRUCTOR, LOCATOR, GENERATOR)


def squash(text: str) -> str:
    return " ".join(text.split())


def fact_in_passage(fact: str, passage_text: str) -> bool:
    """A located fact must be copied from its passage (whitespace and a final period aside)."""
    needle = squash(fact).rstrip(".")
    return bool(needle) and needle in squash(passage_text)


SNAP_MIN = 0.5
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> list[str]:
    """The sentences of `text`, whitespace squashed (as a located fact copies them)."""
    return [s.strip() for s in _SENTENCE_END.split(squash(text)) if s.strip()]


def nearest_sentence(fact: str, passage_text: str) -> tuple[str, float]:
    """The passage sentence sharing the most words with `fact`, and its token F1 with it."""
    best, best_score = "", 0.0
    for sentence in sentences(passage_text):
        score = f1_score(fact, [sentence])
        if score > best_score:
            best, best_score = sentence, score
    return best, best_score


def gather_passages(
    index: Index, trace: Trace, retrieved: Retrieved, intents: list[str], k: int
) -> list[Passage]:
    """Top-k passages per intent, in intent order, deduplicated by id: passage [n] of SMART's
    trajectory is item n-1. Inference and training-data construction both number passages so."""
    found: dict[str, Passage] = {}
    for intent in intents:
        for p in retrieve_traced(index, trace, retrieved, "retriever", intent, k):
            found.setdefault(p.id, p)
    return list(found.values())


def retrieval_block(
    index: Index,
    trace: Trace,
    retrieved: Retrieved,
    intents: list[str],
    k: int,
    max_passages: int,
    question: str | None = None,
    fill: bool = True,
) -> list[Passage]:
    """The passages of SMART's `<retrieval>` block, at most `max_passages`, deduplicated: with
    `question` (the posed question's search text), its top `k` first, then each intent's top
    `k`, then (`fill`) the question's further hits until the block is full, as `train build
    --question-first` builds it; without, the intents' hits alone."""
    if question is None:
        return gather_passages(index, trace, retrieved, intents, k)[:max_passages]
    depth = max(k, max_passages) if fill else k
    asked = retrieve_traced(index, trace, retrieved, "retriever", question, depth)
    found = {p.id: p for p in asked[:k]}
    others = [i for i in intents if i.strip().lower() != question.strip().lower()]
    for p in gather_passages(index, trace, retrieved, others, k) + asked[k:]:
        found.setdefault(p.id, p)
    return list(found.values())[:max_passages]


def reconstruct(ctx: Players, question: str, max_intents: int) -> list[str]:
    """Search intents for the request (deduplicated, at most `max_intents`)."""
    value = RECONSTRUCTOR.call(ctx, question=question)
    intents = list(dict.fromkeys(i.strip() for i in value["intents"] if i.strip()))
    return intents[:max_intents]


@dataclass
class Located:
    number: int  # [n] as shown to the generator
    passage: Passage
    relevant: bool
    fact: str


def locate(
    ctx: Players,
    question: str,
    number: int,
    passage: Passage,
    snap: bool = False,
) -> Located:
    """Judge one passage; an invented fact (not a substring of the passage) is a parse failure
    that the model is shown and may correct once. With `snap`, a paraphrase close enough to a
    passage sentence (token F1 >= SNAP_MIN) is replaced by that sentence instead."""

    def check(value: dict[str, Any]) -> str | None:
        if value["relevant"] and not fact_in_passage(value["fact"], passage.text):
            if snap and nearest_sentence(value["fact"], passage.text)[1] >= SNAP_MIN:
                return None
            return "the fact must be copied word for word from the passage"
        return None

    value = LOCATOR.call(
        ctx,
        check=check,
        question=question,
        number=str(number),
        title=passage.title,
        text=passage.text,
    )
    fact = squash(value["fact"]) if value["relevant"] else ""
    if fact and not fact_in_passage(fact, passage.text):
        snapped, score = nearest_sentence(fact, passage.text)
        ctx.trace.note(
            "locator",
            f"fact snapped to a passage sentence (token F1 {score:.2f})",
            said=fact,
            snapped=snapped,
        )
        fact = snapped
    return Located(number, passage, bool(value["relevant"]), fact)


def generate(
    ctx: Players,
    question: str,
    facts: list[tuple[int, str, str]],
    max_tokens: int = 64,
) -> tuple[str, list[int]]:
    """Answer from (number, title, fact-or-text) triples; with none, from the request alone."""
    if not facts:
        value = GENERATOR_DIRECT.call(ctx, max_tokens=max_tokens, question=question)
        return value["answer"].strip(), []
    shown = "\n".join(f"[{n}] {title}: {text}" for n, title, text in facts)
    allowed = {n for n, _, _ in facts}

    def check(value: dict[str, Any]) -> str | None:
        wrong = [c for c in value["citations"] if c not in allowed]
        return (
            f"citations {wrong} are not among the fact numbers {sorted(allowed)}" if wrong else None
        )

    value = GENERATOR.call(ctx, check=check, max_tokens=max_tokens, facts=shown, question=question)
    return value["answer"].strip(), list(dict.fromkeys(value["citations"]))
