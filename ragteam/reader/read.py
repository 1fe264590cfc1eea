"""Reading: the question against every passage handed over, the best spans found across them
on one scale (`ragteam.reader.model`), each with its passage, its character offsets, the
sentence it stands in and its probability, and the probability that no passage answers."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragteam.common.once import loaded_once
from ragteam.common.text import sentence_around
from ragteam.errors import InputError
from ragteam.minilm.cross_encoder import Weights, read_weights
from ragteam.reader.bounds import asked_words, crosses, echoes, whole
from ragteam.reader.confidence import Confidence
from ragteam.reader.decider import decider_path
from ragteam.reader.model import EXTRAS, MAX_SPAN, SpanNet, group_log_parts, native_bf16
from ragteam.reader.prior import PassagePrior
from ragteam.reader.ranker import Ranker, ranker_path
from ragteam.reader.spans import Reading, Span
from ragteam.reader.view import Viewed
from ragteam.types import Passage

FORMAT = "ragteam-span-reader/1"
WEIGHTS_NAME = "reader-minilm.safetensors"
RETRAIN = "ragteam train reader"
TOP_TOKENS = 12  # starts and ends tried per window
# windows of (question, passage) pairs whose network output a reader keeps (about 4 KB a
# window): `read`'s second reading, the support layer and SMART's locator read again what was
# read before, and a passage's logits do not depend on the passages read beside it (only the
# decoding's normalisation is shared)
KEPT_WINDOWS = 1024


@dataclass(frozen=True)
class Calibration:
    """Thresholds fitted on held training questions with the weights (their sidecar file
    `NAME.calibration.json`): `support`, a single-passage reading that agrees with a sentence;
    `span`, the reader's own answer over all it read; `abstain`, the no-answer probability at
    or above which nothing is taken as found."""

    support: float
    span: float
    abstain: float
    confidence: Confidence | None = None  # None: a span's confidence is its words' probability
    prior: PassagePrior | None = None  # None: spans in the order of their probability

    @classmethod
    def read(cls, path: Path) -> Calibration:
        import json

        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            model, prior = data.get("confidence"), data.get("prior")
            return cls(
                float(data["support"]),
                float(data["span"]),
                float(data["abstain"]),
                Confidence.from_json(model) if model is not None else None,
                PassagePrior.from_json(prior) if prior is not None else None,
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError, InputError) as exc:
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
        self,
        net: SpanNet,
        meta: dict[str, str],
        digest: str,
        calibration: Calibration,
        ranker: Ranker | None = None,
        decider: Path | None = None,
    ) -> None:
        self.net, self.meta, self.digest, self.calibration = net, meta, digest, calibration
        self.ranker = ranker  # the answer ranker fitted with these weights, if any
        self.decider_path = decider  # the yes/no decider beside these weights, if any
        self.identity = f"{FORMAT}@{digest}"
        self._kept: OrderedDict[tuple[str, str], _Logits] = OrderedDict()
        self._kept_windows = 0
        self._lock = threading.Lock()

    def answer_threshold(self, polar: bool = False) -> float:
        """The confidence at or above which the reader's own answer (a yes or no: `polar`)
        is labelled supported: the ranker's threshold where it picks the answer, else the
        calibration's `span`."""
        if self.ranker is None:
            return self.calibration.span
        return self.ranker.polar_threshold if polar else self.ranker.threshold

    def pieces(self, word: str) -> int:
        """How many word pieces the reader's vocabulary holds `word` in (1: a word it knows
        whole; a name or a code token it has never seen comes in more)."""
        return len(self.net.tokenizer.tokenize(word))

    def confidence(self, reading: Reading, span: Span, passages: list[Passage]) -> float:
        """The probability that `span` of `reading` (over `passages`, in the order read) is a
        right answer: the calibration's confidence model, or without one its words'
        probability over all the passages."""
        if self.calibration.confidence is None:
            return reading.answer_score(span.text)
        order = {p.id: n for n, p in enumerate(passages)}
        return self.calibration.confidence(reading, span, order)

    def read(
        self,
        question: str,
        passages: list[Passage],
        top: int = 5,
        key_lines: bool = False,
        skip_echoes: bool = False,
    ) -> Reading:
        """The `top` best spans over all `passages` (read together, one scale), each passage
        read with its heading path before its text (`Viewed`): a span may come from either.
        With `key_lines`, a passage of lines is read a second time as its key line alone
        (`Viewed.key_line`), the same words in both readings one answer. With `skip_echoes`,
        a span made only of the question's own words is no answer (`bounds.echoes`)."""
        headings = bool(self.net.heading_view)
        usable = [Viewed.of(p, question, headings) for p in passages if p.text.strip()]
        if key_lines:
            keys = (Viewed.key_line(v.passage, question) for v in list(usable))
            usable += [k for k in keys if k is not None]
        if not usable or not question.strip():
            return Reading((), 1.0)
        import torch

        with torch.inference_mode():
            logits = _Logits.joined(self._logits(question, [v.text for v in usable]))
            z_start, z_end = group_log_parts(logits.start, logits.end, logits.extra)
            asked = asked_words(question) if skip_echoes else None
            return _decode(usable, logits, float(z_start + z_end), top, asked)

    def _logits(self, question: str, texts: list[str]) -> list[_Logits]:
        """Each text's network output read with `question`: kept ones as kept, the others
        computed in one batch (and kept, the least recently used dropped beyond
        KEPT_WINDOWS windows)."""
        with self._lock:
            known = {t: self._kept.get((question, t)) for t in texts}
            for t, found in known.items():
                if found is not None:
                    self._kept.move_to_end((question, t))
        missing = [t for t, found in known.items() if found is None]
        if missing:
            windows = self.net.windows(question, missing)
            start, end, extra = (t.float().cpu() for t in self.net.logits(windows))
            offsets = np.asarray(windows.offsets, dtype=np.int32).reshape(*start.shape, 2)
            context = np.asarray(windows.context, dtype=bool).reshape(start.shape)
            read = windows.inputs["attention_mask"].sum(-1).cpu().numpy()  # tokens a window
            with self._lock:
                for n, text in enumerate(missing):
                    rows = [w for w, which in enumerate(windows.passage) if which == n]
                    known[text] = _Logits(  # one passage's windows: each reads passage 0
                        [0] * len(rows),
                        offsets[rows],
                        context[rows],
                        start[rows],
                        end[rows],
                        extra[rows],
                        int(read[rows].sum()),
                    )
                    # another thread may have kept the same pair meanwhile: count it once
                    replaced = self._kept.pop((question, text), None)
                    self._kept_windows -= len(replaced.passage) if replaced else 0
                    self._kept[(question, text)] = known[text]
                    self._kept_windows += len(rows)
                while self._kept_windows > KEPT_WINDOWS and self._kept:
                    self._kept_windows -= len(self._kept.popitem(last=False)[1].passage)
        return [known[t] for t in texts]


@dataclass(frozen=True)
class _Logits:
    """The network's output over windows of passages read with one question: per window the
    passage it reads (index into the passages given), each token's character offsets and
    whether it is a passage token; start and end logits (windows x tokens, -1e4 off the
    passage) and the three extras (windows x 3)."""

    passage: list[int]
    offsets: np.ndarray  # windows x tokens x 2
    context: np.ndarray  # windows x tokens
    start: Any
    end: Any
    extra: Any
    tokens: int  # what the network read: question and passage tokens of every window

    @staticmethod
    def joined(parts: list[_Logits]) -> _Logits:
        """One passage's output after another (the i-th part reads passage i), padded to the
        longest window."""
        import torch

        width = max(p.start.shape[1] for p in parts)

        def pad(t: Any) -> Any:
            return torch.nn.functional.pad(t, (0, width - t.shape[1]), value=-1e4)

        def padded(a: np.ndarray) -> np.ndarray:
            return np.pad(a, [(0, 0), (0, width - a.shape[1])] + [(0, 0)] * (a.ndim - 2))

        return _Logits(
            [i for i, p in enumerate(parts) for _ in p.passage],
            np.concatenate([padded(p.offsets) for p in parts]),
            np.concatenate([padded(p.context) for p in parts]),
            torch.cat([pad(p.start) for p in parts]),
            torch.cat([pad(p.end) for p in parts]),
            torch.cat([p.extra for p in parts]),
            sum(p.tokens for p in parts),
        )


def _decode(
    usable: list[Viewed], logits: _Logits, log_z: float, top: int, asked: frozenset[str] | None
) -> Reading:
    import math

    import torch

    start, end, extra = logits.start, logits.end, logits.extra

    found: dict[tuple[int, int, int, str], float] = {}
    none = 0.0
    for w, which in enumerate(logits.passage):
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
                    or not logits.context[w, i]
                    or not logits.context[w, j]
                ):
                    continue
                a, b = int(logits.offsets[w, i, 0]), int(logits.offsets[w, j, 1])
                cut = usable[which].cut
                if b <= a or a < cut <= b or crosses(text, a, b) or (usable[which].key and a < cut):
                    continue  # not across heading and text, paragraphs or table rows
                a, b = whole(text, a, b)
                if echoes(asked, text[a:b]):
                    continue  # the question's own words, not its answer
                score = float(start[w, i] + end[w, j])
                key = (which, a, b, "span")
                if score > found.get(key, -math.inf):
                    found[key] = score
                if best_span is None or score > found[(which, *best_span, "span")]:
                    best_span = (a, b)
        for kind, logit in zip(EXTRAS[1:], doubled[1:], strict=True):
            if usable[which].key:
                break  # yes and no are read over the whole passage
            a, b = best_span or (0, len(text))
            key = (which, a, b, kind)
            found[key] = max(found.get(key, -math.inf), logit)
    ranked = sorted(found.items(), key=lambda item: -item[1])[: top * 2]
    spans = _merged(
        [_span(usable[p], a, b, kind, math.exp(s - log_z)) for (p, a, b, kind), s in ranked]
    )[:top]
    unread = tuple((v.passage.id, v.unread) for v in usable if v.unread)
    polar = sorted(
        ((k, v) for k, v in found.items() if k[3] != "span" and not usable[k[0]].key),
        key=lambda kv: -kv[1],
    )
    outcomes = tuple(
        _span(usable[p], a, b, kind, math.exp(s - log_z)) for (p, a, b, kind), s in polar
    )
    return Reading(spans, min(1.0, none), unread, outcomes, logits.tokens)


def _merged(spans: list[Span]) -> tuple[Span, ...]:
    """`spans` with the same place of the same passage (read in two views: the passage and its
    key line) made one, their probabilities summed, best first."""
    kept: dict[tuple[str, int, int, str, bool], Span] = {}
    for s in spans:
        key = (s.passage_id, s.start, s.end, s.kind, s.heading)
        had = kept.get(key)
        kept[key] = s if had is None else replace(had, score=had.score + s.score)
    return tuple(sorted(kept.values(), key=lambda s: -s.score))


def _span(viewed: Viewed, a: int, b: int, kind: str, score: float) -> Span:
    """A reading of `viewed` at [a, b) of its read text, in the passage's own offsets (or,
    before `cut`, in its heading path's: a heading span)."""
    cut, passage = viewed.cut, viewed.passage
    if kind == "span" and b <= cut:
        path = viewed.text[: cut - 1]
        return Span(passage.id, a, b, path[a:b], path, 0, score, kind, heading=True)
    a, b = max(0, a - cut) + viewed.lo, max(0, b - cut) + viewed.lo
    s_start, s_end = sentence_around(passage.text, a, b)
    text = passage.text[a:b] if kind == "span" else kind
    return Span(passage.id, a, b, text, passage.text[s_start:s_end], s_start, score, kind)


def load_reader(path: Path | None = None, threads: int | None = None) -> Reader:
    """A reader with the weights at `path` (default: shipped). The network is loaded once per
    process (the file's mtime and size are part of the key: a changed file is loaded again);
    each reader returned keeps its own network outputs, so one answer's readings never leak
    into another's (an answer's readers: `ragteam.reader.answer.Readers`)."""
    path = (path or default_weights()).expanduser()
    if not path.is_file():
        raise InputError(
            f"the span reader's weights {path} are missing: reinstall ragteam, or train them "
            f"with `{RETRAIN} --out {path}`"
        )
    stat = path.stat()
    return Reader(*_loaded(path.resolve(), (stat.st_mtime_ns, stat.st_size), threads))


@loaded_once(maxsize=2)
def _loaded(
    path: Path, _stamp: tuple[int, int], threads: int | None
) -> tuple[SpanNet, dict[str, str], str, Calibration, Ranker | None, Path | None]:
    net, meta, digest = load_net(path, threads)
    ranked = ranker_path(path)
    ranker = Ranker.read(ranked) if ranked.exists() else None
    decider = decider_path(path)
    calibration = Calibration.read(calibration_path(path))
    return net, meta, digest, calibration, ranker, decider if decider.exists() else None


WEIGHTS = Weights("span reader", RETRAIN, FORMAT)


def load_net(path: Path, threads: int | None = None) -> tuple[SpanNet, dict[str, str], str]:
    """The network with the weights file at `path`, its metadata and digest (no calibration:
    what `ragteam train reader` calibrates)."""
    tensors, meta = read_weights(path, WEIGHTS)
    net = SpanNet(
        threads,
        meta.get("line_mark", ""),
        heading_view=meta.get("heading_view", ""),
        bf16=native_bf16(),
    )
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
