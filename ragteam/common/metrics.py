"""Answer, citation, retrieval and cost metrics as plain functions."""

from __future__ import annotations

import collections
import re
import string
from collections.abc import Iterable, Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD normalization: lower case, drop punctuation, drop articles, collapse spaces. A text
    that is nothing but an article keeps it: the option label "A" stays "a" (else every empty
    or failed reply would equal the label A)."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split()) or " ".join(text.split())


def exact_match(prediction: str, golds: Sequence[str]) -> float:
    """Normalized prediction equals a normalized gold answer; an empty reply matches nothing."""
    pred = normalize_answer(prediction)
    if not pred:
        return 0.0
    return max((float(pred == normalize_answer(g)) for g in golds), default=0.0)


def _f1(prediction: str, gold: str) -> float:
    pred_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    common = collections.Counter(pred_tokens) & collections.Counter(gold_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def f1_score(prediction: str, golds: Sequence[str]) -> float:
    """Token F1 after SQuAD normalization, the best over the gold answers."""
    return max((_f1(prediction, g) for g in golds), default=0.0)


def match(prediction: str, golds: Sequence[str]) -> float:
    """SMART's 'match': some normalized gold answer occurs in the normalized prediction."""
    pred = f" {normalize_answer(prediction)} "
    return max(
        (float(bool(n) and f" {n} " in pred) for n in map(normalize_answer, golds)), default=0.0
    )


def choice_accuracy(prediction: str, label: str, choices: dict[str, str] | None = None) -> float:
    """Multiple choice / true-false: the prediction names the gold label (or its option text)."""
    pred, gold = _plain(prediction), _plain(label)  # labels keep articles: "A" is a label
    if not pred or not gold:
        return 0.0
    if pred == gold or pred.split()[:1] == [gold]:
        return 1.0
    if choices and label in choices:
        return float(normalize_answer(prediction) == normalize_answer(choices[label]))
    return 0.0


def _plain(text: str) -> str:
    return " ".join("".join(ch for ch in text.lower() if ch not in _PUNCT).split())


def citation_scores(
    cited: Iterable[str], gold: Iterable[str], any_of: bool = False
) -> dict[str, float]:
    """Precision and recall of cited document ids against the gold supporting ids. With
    `any_of` (each gold passage suffices alone) recall is 1 when any gold passage is cited."""
    cited_set, gold_set = set(cited), set(gold)
    hit = len(cited_set & gold_set)
    recall = (hit / len(gold_set) if gold_set else 0.0) if not any_of else float(hit > 0)
    return {
        "citation_precision": hit / len(cited_set) if cited_set else 0.0,
        "citation_recall": recall,
    }


def retrieval_recall(
    seen: Iterable[str], gold: Iterable[str], any_of: bool = False
) -> dict[str, float]:
    """Of the gold ids, did the strategy see all of them, and what fraction. With `any_of`
    (each gold passage suffices alone) both say whether it saw at least one."""
    seen_set, gold_set = set(seen), set(gold)
    found = len(seen_set & gold_set)
    if any_of:
        return {"retrieval_all": float(found > 0), "retrieval_fraction": float(found > 0)}
    return {
        "retrieval_all": float(bool(gold_set) and found == len(gold_set)),
        "retrieval_fraction": found / len(gold_set) if gold_set else 0.0,
    }


def auroc(scores: Sequence[float], labels: Sequence[int]) -> float:
    """Area under the ROC curve (ties count half); 0.5 when one class is missing."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return 0.5
    ranked = sorted([(s, 1) for s in pos] + [(s, 0) for s in neg])
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        mean_rank = (i + j + 1) / 2  # ranks are 1-based
        rank_sum += mean_rank * sum(1 for k in range(i, j) if ranked[k][1])
        i = j
    return (rank_sum - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))
