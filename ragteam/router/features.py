"""Context features for the router: the paper's oracle label, or label-free question features."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragteam.router.table import Question

WH_WORDS = ("who", "what", "when", "where", "which", "how", "why")
YES_NO = ("is", "are", "was", "were", "do", "does", "did", "can", "has", "have")
COMPARISON = re.compile(
    r"\b(or|both|same|either|neither|more|less|older|younger|earlier|later|first|larger|"
    r"smaller|higher|lower|longer|shorter|than|compare[ds]?)\b",
    re.IGNORECASE,
)
BRIDGE = re.compile(r"\b(of the|whose|that|which|who|where|in which|by the)\b", re.IGNORECASE)
CAPITALIZED = re.compile(r"(?:\b[A-Z][\w'\-]*(?:\s+(?:of|the|de|and|&)?\s*[A-Z][\w'\-]*)*)")


@dataclass
class OneHot:
    """The paper's context: the one-hot complexity label (A/B/C), no bias."""

    labels: tuple[str, ...] = ("A", "B", "C")
    name: str = "onehot"

    def fit(self, questions: Sequence[Question]) -> OneHot:
        return self

    def __call__(self, q: Question) -> list[float]:
        return [float(q.label == label) for label in self.labels]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "labels": list(self.labels)}


def surface(question: str) -> list[float]:
    """Cheap cues from the question text alone (the first word is the wh-word, if any)."""
    words = question.lower().split()
    first = words[0].strip("?,.") if words else ""
    wh = [float(first == w or (first not in WH_WORDS and w in words[:3])) for w in WH_WORDS]
    spans = [s for s in CAPITALIZED.findall(question[1:]) if s.strip()]
    return [
        1.0,  # bias
        min(len(words), 40) / 40,
        *wh,
        float(first in YES_NO),
        min(len(spans), 4) / 4,
        min(len(COMPARISON.findall(question)), 3) / 3,
        min(len(BRIDGE.findall(question)), 3) / 3,
    ]


@dataclass
class QuestionFeatures:
    """Label-free context: surface cues plus the MiniLM embedding reduced by PCA (fitted on the
    training questions) to `dims` dimensions."""

    dims: int = 4
    name: str = "question"
    mean: list[float] = field(default_factory=list)
    components: list[list[float]] = field(default_factory=list)
    scale: list[float] = field(default_factory=list)

    def fit(self, questions: Sequence[Question]) -> QuestionFeatures:
        if self.dims:
            vectors = _embed([q.question for q in questions])
            center = vectors.mean(axis=0)
            _, _, vt = np.linalg.svd(vectors - center, full_matrices=False)
            projected = (vectors - center) @ vt[: self.dims].T
            self.mean, self.components = center.tolist(), vt[: self.dims].tolist()
            self.scale = (projected.std(axis=0) + 1e-9).tolist()
        return self

    def __call__(self, q: Question) -> list[float]:
        values = surface(q.question)
        if self.dims:
            if not self.components:
                raise ValueError("fit QuestionFeatures on training questions first")
            vec = _embed([q.question])[0] - np.asarray(self.mean)
            reduced = (np.asarray(self.components) @ vec) / np.asarray(self.scale)
            values += [float(v) for v in np.clip(reduced, -3, 3) / 3]
        return values

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "dims": self.dims,
            "mean": self.mean,
            "components": self.components,
            "scale": self.scale,
        }


@functools.lru_cache(maxsize=8192)
def _embed_one(text: str) -> tuple[float, ...]:
    from ragteam.retrieval.dense import encode

    return tuple(float(v) for v in encode([text])[0])


def _embed(texts: list[str]) -> np.ndarray:
    """MiniLM embeddings, remembered per text (training re-reads the same questions)."""
    return np.asarray([_embed_one(t) for t in texts])


def features_from_dict(data: dict[str, Any]) -> OneHot | QuestionFeatures:
    if data.get("name") == "onehot":
        return OneHot(tuple(data["labels"]))
    if data.get("name") == "question":
        return QuestionFeatures(
            int(data["dims"]), "question", data["mean"], data["components"], data["scale"]
        )
    raise ValueError(f"unknown feature set {data.get('name')!r}")
