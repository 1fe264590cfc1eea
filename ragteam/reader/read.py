"""Reading: the question against every passage handed over, the best spans found across them
on one scale (`ragteam.reader.model`), each with its passage, its character offsets, the
sentence it stands in and its probability, and the probability that no passage answers."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragteam.cross_encoder import Weights, read_weights
from ragteam.errors import InputError
from ragteam.reader.model import EXTRAS, MAX_SPAN, SpanNet, group_log_parts
from ragteam.text import sentence_around
from ragteam.types import Passage

FORMAT = "ragteam-span-reader/1"
WEIGHTS_NAME = "reader-minilm.safetensors"
RETRAIN = "ragteam train reader"
TOP_TOKENS = 12  # starts and ends tried per window


@dataclass(frozen=True)
class Span:
    """One reading: `text` = passage.text[start:end] (for a yes/no reading, "yes"/"no" and
    the offsets of the sentence it rests on), the sentence around it and its probability."""

    passage_id: str
    start: int
    end: int
    text: str
    sentence: str
    sentence_start: int
    score: float
    kind: str = "span"  # span | yes | no

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "score": round(self.score, 4)}


@dataclass(frozen=True)
class Reading:
    """What the reader found: spans best first, and the probability that none of the passages
    answers the question (the answerability head, over all of them)."""

    spans: tuple[Span, ...]
    no_answer: float

    @property
    def best(self) -> Span | None:
        return self.spans[0] if self.spans else None

    def answer_score(self, text: str) -> float:
        """The probability of an answer saying `text`: every span saying it, summed (the same
        words in two passages are one answer)."""
        from ragteam.metrics import normalize_answer

        said = normalize_answer(text)
        return min(1.0, sum(s.score for s in self.spans if normalize_answer(s.text) == said))

    def to_dict(self) -> dict[str, Any]:
        return {"spans": [s.to_dict() for s in self.spans], "no_answer": round(self.no_answer, 4)}


@dataclass(frozen=True)
class Calibration:
    """Thresholds fitted on held training questions with the weights (their sidecar file
    `NAME.calibration.json`): `support`, a single-passage reading that agrees with a sentence;
    `span`, the reader's own answer over all it read; `abstain`, the no-answer probability at
    or above which nothing is taken as found."""

    support: float
    span: float
    abstain: float

    @classmethod
    def read(cls, path: Path) -> Calibration:
        import json

        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(float(data["support"]), float(data["span"]), float(data["abstain"]))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            weights = path.with_name(path.name.removesuffix(".calibration.json") + ".safetensors")
            raise InputError(
                f"the span reader's calibration {path} is missing or unreadable ({exc}): "
                f"{_fix(weights)}"
            ) from exc


def calibration_path(weights: Path) -> Path:
    return weights.with_name(weights.name.removesuffix(".safetensors") + ".calibration.json")


def default_weights() -> Path:
    from importlib.resources import files

    return Path(str(files("ragteam.data").joinpath(WEIGHTS_NAME)))


class Reader:
    """The trained span reader (weights: `path`, by default the file shipped in the package).
    A missing, truncated or foreign file is an `InputError` naming it, never a fallback."""

    def __init__(
        self, net: SpanNet, meta: dict[str, str], digest: str, calibration: Calibration
    ) -> None:
        self.net, self.meta, self.digest, self.calibration = net, meta, digest, calibration
        self.identity = f"{FORMAT}@{digest}"

    def read(self, question: str, passages: list[Passage], top: int = 5) -> Reading:
        """The `top` best spans over all `passages` (read together, one scale)."""
        usable = [p for p in passages if p.text.strip()]
        if not usable or not question.strip():
            return Reading((), 1.0)
        import torch

        with torch.inference_mode():
            windows = self.net.windows(question, [p.text for p in usable])
            start, end, extra = (t.float().cpu() for t in self.net.logits(windows))
            z_start, z_end = group_log_parts(start, end, extra)
            return _decode(usable, windows, start, end, extra, float(z_start + z_end), top)


def _decode(usable, windows, start, end, extra, log_z: float, top: int) -> Reading:  # noqa: ANN001
    import math

    import torch

    found: dict[tuple[int, int, int, str], float] = {}
    none = 0.0
    for w, which in enumerate(windows.passage):
        text = usable[which].text
        doubled = (2 * extra[w]).tolist()
        none += math.exp(doubled[0] - log_z)
        best_span: tuple[int, int] | None = None
        starts = torch.topk(start[w], min(TOP_TOKENS, start.shape[1])).indices.tolist()
        ends = torch.topk(end[w], min(TOP_TOKENS, end.shape[1])).indices.tolist()
        for i in starts:
            for j in ends:
                if (
                    j < i
                    or j - i >= MAX_SPAN
                    or not windows.context[w][i]
                    or not windows.context[w][j]
                ):
                    continue
                a, b = windows.offsets[w][i][0], windows.offsets[w][j][1]
                if b <= a:
                    continue
                score = float(start[w, i] + end[w, j])
                key = (which, a, b, "span")
                if score > found.get(key, -math.inf):
                    found[key] = score
                if best_span is None or score > found[(which, *best_span, "span")]:
                    best_span = (a, b)
        for kind, logit in zip(EXTRAS[1:], doubled[1:], strict=True):
            a, b = best_span or (0, len(text))
            key = (which, a, b, kind)
            found[key] = max(found.get(key, -math.inf), logit)
    ranked = sorted(found.items(), key=lambda item: -item[1])[:top]
    spans = tuple(
        _span(usable[p], a, b, kind, math.exp(s - log_z)) for (p, a, b, kind), s in ranked
    )
    return Reading(spans, min(1.0, none))


def _span(passage: Passage, a: int, b: int, kind: str, score: float) -> Span:
    s_start, s_end = sentence_around(passage.text, a, b)
    text = passage.text[a:b] if kind == "span" else kind
    return Span(passage.id, a, b, text, passage.text[s_start:s_end], s_start, score, kind)


def load_reader(path: Path | None = None, threads: int | None = None) -> Reader:
    """The reader with the weights at `path` (default: shipped), loaded once per process (the
    file's mtime and size are part of the key: a changed file is loaded again)."""
    path = (path or default_weights()).expanduser()
    if not path.is_file():
        raise InputError(
            f"the span reader's weights {path} are missing: reinstall ragteam, or train them "
            f"with `{RETRAIN} --out {path}`"
        )
    stat = path.stat()
    return _loaded(path.resolve(), (stat.st_mtime_ns, stat.st_size), threads)


@functools.lru_cache(maxsize=2)
def _loaded(path: Path, _stamp: tuple[int, int], threads: int | None) -> Reader:
    net, meta, digest = load_net(path, threads)
    return Reader(net, meta, digest, Calibration.read(calibration_path(path)))


WEIGHTS = Weights("span reader", RETRAIN, FORMAT)


def load_net(path: Path, threads: int | None = None) -> tuple[SpanNet, dict[str, str], str]:
    """The network with the weights file at `path`, its metadata and digest (no calibration:
    what `ragteam train reader` calibrates)."""
    tensors, meta = read_weights(path, WEIGHTS)
    net = SpanNet(threads, meta.get("line_mark", ""))
    try:
        net.load_changed(tensors)
    except ValueError as exc:
        raise InputError(
            f"the span reader's weights {path} do not fit ({exc}): {_fix(path)}"
        ) from exc
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return net, meta, digest


def _fix(path: Path) -> str:
    return f"reinstall ragteam, or train new weights with `{RETRAIN} --out {path}`"
