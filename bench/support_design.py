"""How the lexical support layer was chosen (docs/benchmarks.md section 29), on answers that
`bench/support.py answers` stored: no model call.

    python bench/support_design.py rules ANSWERS --questions Q --index IDX
    python bench/support_design.py scores ANSWERS --questions Q --index IDX

`rules`: AUROC of the support score for answer match with and without the two rules of
`lexical.new_words` (an echo of the question adds nothing unless it offers a choice; a number
adds nothing when none is asked), the same answers, paired bootstrap of the difference.
`scores`: three question-anchored variants of the score against the plain one (run on the
training-question design set only).
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from pathlib import Path

import ragteam.support.lexical as lexical
from ragteam.common.metrics import auroc
from ragteam.retrieval import load_index
from ragteam.support.stage import check_support
from ragteam.types import SupportSettings

Row = tuple[dict[str, float], int]  # scores by name, match


def without_rules(question: str, sentence: str) -> list[str]:
    """`new_words` before the rules: every word of the sentence the question does not say."""
    asked = set(lexical.words(question))
    return [w for w in lexical.words(sentence) if w not in asked]


def rule_scores(question: str, answer: str, passages: list) -> dict[str, float]:
    with_rules = lexical.new_words
    out = {}
    for name, rule in (("without", without_rules), ("with", with_rules)):
        lexical.new_words = rule
        try:
            found = check_support(question, answer, passages, SupportSettings("lexical"))
        finally:
            lexical.new_words = with_rules
        out[name] = found.score
    return out


def _asked(question: str, sentence: str) -> list[str]:
    new = set(lexical.new_words(question, sentence))
    return [w for w in dict.fromkeys(lexical.words(question)) if w not in new]


def question_share(question: str, sentence: str, passage: str) -> float:
    """Share of the question's other words found anywhere in the passage."""
    asked, held = _asked(question, sentence), set(lexical.words(passage))
    return sum(w in held for w in asked) / len(asked) if asked else 0.0


def question_near(question: str, sentence: str, passage: str, width: int = 10) -> float:
    """Share of the question's other words within `width` words of the answer's in the passage."""
    asked, tokens = _asked(question, sentence), lexical.words(passage)
    new = set(lexical.new_words(question, sentence))
    near: set[str] = set()
    for i, token in enumerate(tokens):
        if token in new:
            near.update(tokens[max(0, i - width) : i + width + 1])
    return sum(w in near for w in asked) / len(asked) if asked else 0.0


def variant_scores(question: str, answer: str, passages: list) -> dict[str, float]:
    texts = [f"{p.title}. {p.text}" if p.title else p.text for p in passages]
    sents = [answer[a:b] for a, b in lexical.sentences(answer)] or [""]

    def worst_best(fn: Callable[[str, str], float]) -> float:
        return min(max((fn(s, t) for t in texts), default=0.0) for s in sents)

    def cover(s: str, t: str) -> float:
        return lexical.lexical_score(question, s, t)

    return {
        "plain": worst_best(cover),
        "x share": worst_best(
            lambda s, t: cover(s, t) * (0.5 + 0.5 * question_share(question, s, t))
        ),
        "x near": worst_best(lambda s, t: cover(s, t) * question_near(question, s, t)),
        "gate x near": worst_best(
            lambda s, t: (cover(s, t) >= lexical.LEXICAL_THRESHOLD) * question_near(question, s, t)
        ),
    }


def paired(rows: list[Row], a: str, b: str, rounds: int = 1000) -> tuple[float, float, float]:
    """AUROC(b) - AUROC(a) and its bootstrap 95% interval."""
    rng, diffs = random.Random(0), []
    for _ in range(rounds):
        sample = [rng.choice(rows) for _ in rows]
        labels = [y for _, y in sample]
        diffs.append(
            auroc([s[b] for s, _ in sample], labels) - auroc([s[a] for s, _ in sample], labels)
        )
    diffs.sort()
    labels = [y for _, y in rows]
    whole = auroc([s[b] for s, _ in rows], labels) - auroc([s[a] for s, _ in rows], labels)
    return whole, diffs[int(0.025 * rounds)], diffs[int(0.975 * rounds)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("what", choices=("rules", "scores"))
    parser.add_argument("answers", type=Path)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--index", required=True)
    args = parser.parse_args()
    index = load_index(args.index)
    questions = {}
    for line in args.questions.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            questions[row["id"]] = row["question"]
    score = rule_scores if args.what == "rules" else variant_scores
    base, others = ("without", ["with"]) if args.what == "rules" else ("plain", None)
    by: dict[str, list[Row]] = {}
    for line in args.answers.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            passages = [index.passage(i) for i in r["read"]]
            scores = score(questions[r["id"]], r["answer"], passages)
            by.setdefault(r["strategy"], []).append((scores, int(r["match"] > 0)))
    for strategy, rows in by.items():
        labels = [y for _, y in rows]
        names = others or [k for k in rows[0][0] if k != base]
        aurocs = ", ".join(f"{k} {auroc([s[k] for s, _ in rows], labels):.3f}" for k in rows[0][0])
        print(f"{strategy} ({len(rows)} answers): AUROC {aurocs}")
        for name in names:
            diff, lo, hi = paired(rows, base, name)
            print(f"  {name} - {base}: {diff:+.3f} ({lo:+.3f}..{hi:+.3f})")


if __name__ == "__main__":
    main()
