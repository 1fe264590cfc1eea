"""Training pairs for the support checker, from the training files' gold evidence: (question +
answer sentence, passage, supported?).

- HotpotQA and MuSiQue (open questions): the gold answer with a supporting paragraph that holds
  it -> supported; the same answer with a paragraph that does not hold it (a distractor, or the
  bridge paragraph of the first hop) -> not; a *wrong* answer taken from the supporting
  paragraph itself (another name or number in it) -> not: the passage contains the words but
  does not answer the question with them. Yes/no answers are left out (no one passage holds
  them).
- Claims with evidence (Fool Me Twice, COVID-Fact): a true claim with its gold evidence ->
  supported; a false claim with the evidence that refutes it, or any claim with another
  section -> not.
- Multiple choice with its open-book fact (OpenBookQA): the right option with the fact ->
  supported; a wrong option with the same fact -> not.

Rows are split by question id (a stable hash): about 10% form the validation split. The
split, the source and the label travel with every pair."""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ragteam.common.metrics import match, normalize_answer
from ragteam.errors import InputError
from ragteam.support.checker import claim_text

YES_NO = {"yes", "no"}
SPAN = re.compile(r"\b(?:[A-Z][\w'.-]+(?:\s+(?:of\s+|the\s+)?[A-Z][\w'.-]+)*|\d[\d,.]*\d|\d)\b")


@dataclass(frozen=True)
class Pair:
    claim: str  # question + answer sentence, or a claim
    passage: str  # "title. text"
    label: int  # 1: supported
    source: str
    split: str  # train | validation


def split_of(row_id: str, share: float = 0.1) -> str:
    digest = int(hashlib.sha256(row_id.encode()).hexdigest()[:8], 16)
    return "validation" if digest / 0xFFFFFFFF < share else "train"


def _rows(path: Path) -> Iterator[dict]:
    if not path.is_file():
        raise InputError(f"no training file {path}: pass the folder that holds it (--data)")
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _sentence(answer: str, rng: random.Random) -> str:
    """The answer as a strategy might write it: bare, or as a short sentence."""
    return rng.choice([answer, f"{answer}.", f"The answer is {answer}."])


def _wrong_span(text: str, answer: str, question: str, rng: random.Random) -> str | None:
    """Another name or number of the passage: neither the answer nor words of the question."""
    said = normalize_answer(answer)
    asked = set(normalize_answer(question).split())
    spans = {
        s
        for s in SPAN.findall(text)
        if normalize_answer(s)
        and normalize_answer(s) not in said
        and said not in normalize_answer(s)
        and not set(normalize_answer(s).split()) <= asked
    }
    return rng.choice(sorted(spans)) if spans else None


def _open_pairs(
    qid: str,
    question: str,
    answer: str,
    paragraphs: list[tuple[str, str, bool]],
    source: str,
    rng: random.Random,
) -> list[Pair]:
    """Pairs of one open question; `paragraphs` are (title, text, supporting)."""
    if normalize_answer(answer) in YES_NO:
        return []
    split = split_of(qid)
    pairs: list[Pair] = []
    holding = [(t, x) for t, x, gold in paragraphs if gold and match(x, [answer])]
    others = [(t, x) for t, x, _ in paragraphs if not match(f"{t} {x}", [answer])]
    for title, text in holding:
        passage = f"{title}. {text}"
        pairs.append(Pair(claim_text(question, _sentence(answer, rng)), passage, 1, source, split))
        wrong = _wrong_span(text, answer, question, rng)
        if wrong:
            claim = claim_text(question, _sentence(wrong, rng))
            pairs.append(Pair(claim, passage, 0, source, split))
    if holding:
        for title, text in rng.sample(others, min(2, len(others))):
            claim = claim_text(question, _sentence(answer, rng))
            pairs.append(Pair(claim, f"{title}. {text}", 0, source, split))
    return pairs


def hotpot_pairs(path: Path, rng: random.Random) -> list[Pair]:
    pairs: list[Pair] = []
    for row in _rows(path):
        gold = {title for title, _ in row.get("supporting_facts", [])}
        paragraphs = [
            (c["title"], " ".join(s.strip() for s in c["sentences"]), c["title"] in gold)
            for c in row["context"]
        ]
        pairs += _open_pairs(
            row["id"], row["question"], row["answers"][0], paragraphs, "hotpotqa", rng
        )
    return pairs


def musique_pairs(path: Path, rng: random.Random) -> list[Pair]:
    pairs: list[Pair] = []
    for row in _rows(path):
        paragraphs = [(c["title"], c["text"], bool(c.get("is_supporting"))) for c in row["context"]]
        pairs += _open_pairs(
            row["id"], row["question"], row["answers"][0], paragraphs, "musique", rng
        )
    return pairs


def claim_pairs(path: Path, rng: random.Random, types: tuple[str, ...]) -> list[Pair]:
    pairs: list[Pair] = []
    for row in _rows(path):
        if row.get("type") not in types or not row.get("context"):
            continue
        split = split_of(row["id"])
        gold = {title for title, _ in row.get("supporting_facts", [])}
        passages = {c["title"]: f"{c['title']}. {' '.join(c['sentences'])}" for c in row["context"]}
        true = row.get("label") == "true"
        for title in sorted(gold & set(passages)):
            pairs.append(Pair(row["question"], passages[title], int(true), row["type"], split))
        others = sorted(set(passages) - gold)
        for title in rng.sample(others, min(1, len(others))):
            pairs.append(Pair(row["question"], passages[title], 0, row["type"], split))
    return pairs


def choice_pairs(path: Path, rng: random.Random, limit: int) -> list[Pair]:
    rows = [r for r in _rows(path) if r.get("context") and r.get("choices")]
    pairs: list[Pair] = []
    for row in rng.sample(rows, min(limit, len(rows))):
        split = split_of(row["id"])
        fact = row["context"][0]
        passage = f"{fact['title']}. {' '.join(fact['sentences'])}"
        right = row["choices"].get(row["label"], "")
        wrong = [t for k, t in row["choices"].items() if k != row["label"]]
        if not right or not wrong:
            continue
        pairs.append(Pair(claim_text(row["question"], right), passage, 1, "openbookqa", split))
        pairs.append(
            Pair(claim_text(row["question"], rng.choice(wrong)), passage, 0, "openbookqa", split)
        )
    return pairs


def training_pairs(
    folder: Path, seed: int = 0, choices: int = 1500, claim_types: tuple[str, ...] = ("fm2",)
) -> list[Pair]:
    """Every pair from a training folder laid out as `shared/data/train` (and the repo's
    `bench/data/train` sample): hotpotqa_train.jsonl, musique_train.jsonl and formats/."""
    rng = random.Random(seed)
    return [
        *hotpot_pairs(folder / "hotpotqa_train.jsonl", rng),
        *musique_pairs(folder / "musique_train.jsonl", rng),
        *claim_pairs(folder / "formats" / "claims_train.jsonl", rng, claim_types),
        *choice_pairs(folder / "formats" / "multiple_choice_train.jsonl", rng, choices),
    ]
