"""Fitting the reader's three thresholds and its confidence model on held training groups (never
a benchmark question), written beside the weights as `NAME.calibration.json`:

- `support`: a single-passage reading agrees with a sentence. Positives: the gold answer
  against its gold passage; negatives: another name or number copied from the same passage
  (the wrong answer that copies a passage's words, which word overlap accepts), and the gold
  answer against a distractor that does not hold it (a passage sharing a word or two with
  the answer, which an unsure reading can echo).
- `confidence`: the model (`ragteam.reader.confidence`) of how likely the reader's own answer
  over all a question's passages is right (F1 >= 0.5), a logistic regression over what its
  reading says of the span, fitted on the held questions asked of three folders (below, each
  split of the files another folder), its L2 strength chosen by AUROC over folds by file.
- `span`: the confidence at which the reader's own answer is labelled supported: the
  lowest confidence at which the answers at or above it are right at least `PRECISION` of the
  time (each answer's confidence from the model fitted without its file's fold), on the held
  questions asked of the first folder (below; those whose answer the folder does
  not hold count as wrong), so that "supported" means right four times in five where the
  reader is used as `read` uses it. (Balanced accuracy over the gold-and-distractor groups,
  the rule before, let a reader less sure of itself put the threshold near zero: most of its
  separation came from the groups with no answer, which abstention already zeroes.)
- `abstain`: the no-answer probability at or above which nothing is taken as found, set so
  that at most `MAX_REFUSED` of the answerable questions are refused, the held questions asked
  as a person asks a folder (`asked_of_a_folder`): the passages a search finds, not the gold
  passage and its distractors, and questions whose answer the folder does not hold.

`support` maximises balanced accuracy; the record keeps what each threshold scores.
All three are fitted on the held groups that are questions (`questions`): the cloze groups
(a sentence with its answer blanked out) teach the reader to find spans, but `read` is asked
questions, and the reader is surer of clozes (trained on many) than of questions: with them
the answerable question's no-answer probabilities sit lower, and so did each threshold."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragteam.common.linear import fit_logistic
from ragteam.common.metrics import auroc, f1_score
from ragteam.common.overlap import lexical_score
from ragteam.reader.agreement import pair_score
from ragteam.reader.confidence import FEATURES, Confidence, Part, span_features
from ragteam.reader.read import Calibration, Reader, calibration_path, load_net
from ragteam.reader.training.data import Group, fold_of, held_out, occurrences
from ragteam.types import Passage

MAX_REFUSED = 0.10
PRECISION = 0.80  # answers at or above the span threshold that are right, on held questions
LEAST_LABELLED = 10  # answers the span threshold must leave labelled to count as reached
SEARCHED = 5  # passages a question is read over in `asked_of_a_folder`, as `read` reads
# the folders the held questions are asked of: the first fits the abstention and span
# thresholds; all of them (each question asked of each) fit the confidence model
FOLDERS = ("#folder", "#f2", "#f3")
L2 = (1.0, 10.0, 100.0)
FOLDS = 5
RIGHT_FEATURES = ("answer_probability",)  # the confidence's `right` part reads only this
_COPYABLE = re.compile(r"\b(?:\d[\d,.]*|[A-Z][\w'\-]+(?:\s+[A-Z][\w'\-]+){0,3})\b")


def balanced_accuracy(scored: Sequence[tuple[float, bool]], t: float) -> float:
    """(TPR + TNR) / 2 of the rule score >= t."""
    positives = sum(1 for _, y in scored if y) or 1
    negatives = sum(1 for _, y in scored if not y) or 1
    tpr = sum(1 for s, y in scored if y and s >= t) / positives
    tnr = sum(1 for s, y in scored if not y and s < t) / negatives
    return (tpr + tnr) / 2


def best_threshold(scored: Sequence[tuple[float, bool]]) -> tuple[float, float]:
    """The threshold (>= counts as positive) with the best balanced accuracy, and that."""
    best = (0.5, 0.0)
    for t in sorted({s for s, _ in scored}):
        if (bacc := balanced_accuracy(scored, t)) > best[1]:
            best = (t, bacc)
    return best


def precise_threshold(
    scored: Sequence[tuple[float, bool]], target: float = PRECISION, least: int = LEAST_LABELLED
) -> tuple[float, float, int]:
    """The lowest score t (>= counts as positive) at which at least `least` scored items are
    at or above t and at least `target` of them are positives: (t, their precision, how
    many). Where no t reaches `target`, a t above every score (nothing labelled: a label
    right less often than promised is not shown), with the best precision there was."""
    ranked = sorted(scored, key=lambda x: -x[0])
    reached: tuple[float, float, int] | None = None
    best = (1.0 + 1e-9, 0.0, 0)
    right = 0
    for n, (score, y) in enumerate(ranked, 1):
        right += y
        if n < len(ranked) and ranked[n][0] == score:
            continue  # a threshold sits below all items of one score
        if n < least:
            continue
        precision = right / n
        if precision >= target:
            reached = (score, precision, n)
        best = max(best, (1.0 + 1e-9, precision, 0), key=lambda b: b[1])
    return reached or best


def support_pairs(
    reader: Reader, held: Sequence[Group], rng: random.Random
) -> list[tuple[float, bool]]:
    out = []
    for g in held:
        if g.label != "span":
            continue
        for k, spans in enumerate(g.spans):
            if not spans:
                continue
            text = g.texts[k]
            passage = Passage("p", "", text)
            answer = g.answers[0]
            wrong = [
                m.group(0)
                for m in _COPYABLE.finditer(text)
                if f1_score(m.group(0), list(g.answers)) == 0
            ]
            out.append((_score(reader, g.question, answer, passage), True))
            if wrong:
                out.append((_score(reader, g.question, rng.choice(wrong), passage), False))
            elsewhere = [
                t
                for t, s in zip(g.texts, g.spans, strict=True)
                if not s and not occurrences(t, answer)
            ]
            if elsewhere:
                other = Passage("d", "", rng.choice(elsewhere))
                out.append((_score(reader, g.question, answer, other), False))
            break
    return out


def _score(reader: Reader, question: str, sentence: str, passage: Passage) -> float:
    lexical = lexical_score(question, sentence, passage.text)
    return pair_score(reader, question, sentence, passage, lexical)


@dataclass(frozen=True)
class HeldReading:
    """A held question read: its best span's confidence features, its words' probability, the
    no-answer probability, whether the span is right, whether the passages hold an answer,
    and the file it comes from (folds are drawn by file)."""

    features: list[float]
    probability: float
    no_answer: float
    right: bool
    has_answer: bool
    file: str


def read_groups(reader: Reader, groups: Sequence[Group]) -> list[HeldReading]:
    """Each group read as `read` reads a question (one reading over its passages in order)."""
    out = []
    for g in groups:
        passages = [Passage(f"p{i}", "", t) for i, t in enumerate(g.texts)]
        reading = reader.read(g.question, passages, top=12)
        best = reading.best
        if best is None:
            continue
        order = {p.id: n for n, p in enumerate(passages)}
        out.append(
            HeldReading(
                span_features(reading, best, order),
                reading.answer_score(best.text),
                reading.no_answer,
                g.label != "none" and f1_score(best.text, list(g.answers)) >= 0.5,
                g.label != "none",
                g.qid.split("/")[0],
            )
        )
    return out


def asked_of_a_folder(
    held: Sequence[Group], k: int = SEARCHED, folder: str = FOLDERS[0]
) -> list[Group]:
    """The held span questions asked of a folder, as `read` is asked: the groups' files (the
    part of a question id before its slash) are split in two by hash (salted with `folder`:
    another name, another folder); the passages of the
    first half's groups, once each, are the folder; every question is read over its top `k`
    passages by BM25 from it. The first half's questions are answerable (their answer's
    passage is in the folder, found or not), the second half's are not (label "none")."""
    from ragteam.retrieval.bm25 import BM25Retriever

    asked = [g for g in held if g.label == "span"]
    inside = [held_out(g.qid.split("/")[0] + folder, 0.5) for g in asked]
    texts = list(dict.fromkeys(t for g, i in zip(asked, inside, strict=True) if i for t in g.texts))
    if not texts:
        return []
    search = BM25Retriever.build([Passage(f"f{n}", "", t) for n, t in enumerate(texts)])
    out = []
    for g, i in zip(asked, inside, strict=True):
        shown = tuple(texts[n] for n, _ in search.search(g.question, k))
        out.append(replace(g, texts=shown, label="span" if i else "none", spans=()))
    return out


def questions(groups: Sequence[Group]) -> list[Group]:
    """The groups that are questions: not clozes (any source named a cloze)."""
    return [g for g in groups if "cloze" not in g.source]


def fit_confidence(asked: Sequence[HeldReading]) -> tuple[Confidence, list[float], dict[str, Any]]:
    """The confidence model fitted on the answers `asked` gives (not withheld): its
    `answerable` part on all of them, its `right` part on those whose passages hold an answer;
    the L2 strength chosen by the AUROC of their product over folds drawn by file. With each
    answer's out-of-fold confidence (to set the span threshold on) and what it scored beside
    the words' probability alone."""
    x = np.asarray([a.features for a in asked], dtype="float64")
    right = np.asarray([a.right for a in asked], dtype="float64")
    has = np.asarray([a.has_answer for a in asked])
    fold = np.asarray([fold_of(a.file, FOLDS) for a in asked])
    best: tuple[float, float, np.ndarray] | None = None
    for l2 in L2:
        out = np.zeros(len(asked))
        for k in range(FOLDS):
            model = _fit_parts(x, right, has, fold != k, l2)
            out[fold == k] = model.probabilities(x[fold == k])
        score = auroc(out.tolist(), right.astype(int).tolist())
        if best is None or score > best[0]:
            best = (score, l2, out)
    assert best is not None
    score, l2, out = best
    labels = right.astype(int).tolist()
    return (
        _fit_parts(x, right, has, np.ones(len(asked), dtype=bool), l2),
        out.tolist(),
        {
            "confidence_answers": len(asked),
            "confidence_l2": l2,
            "confidence_auroc_out_of_fold": round(score, 4),
            "probability_auroc": round(auroc([a.probability for a in asked], labels), 4),
            "confidence_auroc_out_of_fold_answerable": round(
                auroc(out[has].tolist(), right[has].astype(int).tolist()), 4
            ),
            "probability_auroc_answerable": round(
                auroc(
                    [a.probability for a in asked if a.has_answer],
                    [int(a.right) for a in asked if a.has_answer],
                ),
                4,
            ),
        },
    )


def _fit_parts(
    x: np.ndarray, right: np.ndarray, has: np.ndarray, rows: np.ndarray, l2: float
) -> Confidence:
    answerable = fit_logistic(x[rows], has[rows].astype("float64"), l2)
    cols = [FEATURES.index(f) for f in RIGHT_FEATURES]
    found = rows & has
    return Confidence(
        Part(FEATURES, answerable),
        Part(RIGHT_FEATURES, fit_logistic(x[found][:, cols], right[found], l2)),
    )


def calibrate(weights: Path, held: Sequence[Group], seed: int = 13) -> dict[str, Any]:
    """Fit the thresholds and the confidence model of the weights at `weights` on the
    questions of `held`; write the sidecar file."""
    clozes = len(held)
    held = questions(held)
    clozes -= len(held)
    net, meta, digest = load_net(weights)
    reader = Reader(net, meta, digest, Calibration(0.5, 0.5, 1.0))
    pairs = support_pairs(reader, held, random.Random(seed))
    support, support_bacc = best_threshold(pairs)
    folders = {f: read_groups(reader, asked_of_a_folder(held, folder=f)) for f in FOLDERS}
    asked = folders[FOLDERS[0]]
    answerable = sorted(a.no_answer for a in asked if a.has_answer)
    cut = int(len(answerable) * (1 - MAX_REFUSED))
    abstain = answerable[min(cut, len(answerable) - 1)] + 1e-6 if answerable else 1.0
    given = [(f, a) for f in FOLDERS for a in folders[f] if a.no_answer < abstain]
    confidence, out_of_fold, fitted = fit_confidence([a for _, a in given])
    first = [(p, a.right) for p, (f, a) in zip(out_of_fold, given, strict=True) if f == FOLDERS[0]]
    span, span_precision, labelled = precise_threshold(first)
    readings = read_groups(reader, held)
    confidences = confidence.probabilities(np.asarray([a.features for a in readings]))
    gated = [
        (float(c) if a.no_answer < abstain else 0.0, a.right)
        for c, a in zip(confidences, readings, strict=True)
    ]
    record = {
        "support": support,
        "span": span,
        "abstain": abstain,
        "confidence": confidence.to_json(),
        "weights_sha256_16": digest,
        "fitted_on": {
            "clozes_left_out": clozes,
            "support_pairs": len(pairs),
            "support_balanced_accuracy": round(support_bacc, 4),
            "groups": len(readings),
            "asked_of_a_folder": len(asked),
            "folders": len(FOLDERS),
            "unanswerable_declined": round(
                sum(a.no_answer >= abstain for a in asked if not a.has_answer)
                / max(1, sum(not a.has_answer for a in asked)),
                4,
            ),
            "span_balanced_accuracy": round(balanced_accuracy(gated, span), 4),
            "span_precision_asked_of_a_folder": round(span_precision, 4),
            "span_labelled_asked_of_a_folder": labelled,
            "span_answers_given_asked_of_a_folder": len(first),
            "span_precision_wanted": PRECISION,
            "answerable_refused_at_most": MAX_REFUSED,
            **fitted,
        },
    }
    path = calibration_path(weights)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)
    return record
