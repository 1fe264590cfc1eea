"""Is the support label worth reading? Answers of real strategies on dev300 (gold answers and
gold supporting passages), each checked by the lexical layer and by the trained checker.

    python bench/support.py answers --index IDX --questions bench/data/hotpotqa/dev300.jsonl \\
        --strategies oner,smart --n 100 --checker CHECKER --out /tmp/support/answers.jsonl
    python bench/support.py report /tmp/support/answers.jsonl
    python bench/support.py checker --data ../shared/data/train --checker CHECKER

`answers` runs each strategy once with support off (its own citations: "before"), then checks
the same answer with each layer (no second model call); rows are appended and fsynced, so a
killed run resumes. `report` prints, per strategy and layer: the share labelled supported and
their answer match with a bootstrap CI, the same for not supported, AUROC of the support score
for answer correctness, accuracy at 70% coverage against answering everything, and citation
precision/recall against the gold supporting passages, before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from ragteam import answer
from ragteam.answering import read_passages
from ragteam.metrics import match
from ragteam.retrieval import load_index
from ragteam.support.stage import check_support
from ragteam.training.support import auroc
from ragteam.types import SupportSettings

LAYERS = ("lexical", "checker")


def run_answers(args: argparse.Namespace) -> None:
    index = load_index(args.index)
    rows = [json.loads(x) for x in Path(args.questions).read_text().splitlines() if x.strip()]
    rows = rows[: args.n]
    out = Path(args.out)
    done = set()
    if out.exists():
        done = {(r["strategy"], r["id"]) for r in map(json.loads, out.read_text().splitlines())}
    with out.open("a", encoding="utf-8") as handle:
        for strategy in args.strategies.split(","):
            for n, row in enumerate(rows, start=1):
                if (strategy, row["id"]) in done:
                    continue
                handle.write(json.dumps(one(index, strategy, row, args.checker)) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
                print(f"{strategy} {n}/{len(rows)}", file=sys.stderr, flush=True)


def one(index, strategy: str, row: dict, checker: str) -> dict:
    started = time.perf_counter()
    result = answer(
        row["question"], index=index, strategy=strategy, support=SupportSettings(layer="off")
    )
    seconds = time.perf_counter() - started
    passages = read_passages(result, SimpleNamespace(index=index))
    out = {
        "id": row["id"],
        "strategy": strategy,
        "answer": result.text,
        "match": match(result.text, row["answers"]),
        "gold": row.get("supporting_ids", []),
        "before": [c.passage_id for c in result.citations],
        "read": [p.id for p in passages],
        "seconds": round(seconds, 3),
    }
    for layer in LAYERS:
        started = time.perf_counter()
        found = check_support(
            row["question"],
            result.text,
            passages,
            SupportSettings(layer=layer, checker_path=checker),
        )
        out[layer] = {
            "score": found.score,
            "supported": bool(found.sentences) and all(s.supported for s in found.sentences),
            "any": any(s.supported for s in found.sentences),
            "cited": found.cited,
            "seconds": round(time.perf_counter() - started, 4),
        }
    return out


def bootstrap(values: list[float], rounds: int = 2000) -> tuple[float, float, float]:
    if not values:
        return float("nan"), float("nan"), float("nan")
    rng = random.Random(1)
    means = sorted(sum(rng.choice(values) for _ in values) / len(values) for _ in range(rounds))
    return sum(values) / len(values), means[int(0.025 * rounds)], means[int(0.975 * rounds)]


def precision_recall(rows: list[dict], key) -> tuple[float, float]:
    """Mean citation precision (cited that are gold) and recall (gold that are cited) over
    the rows that cite something / have gold passages."""
    precisions, recalls = [], []
    for r in rows:
        cited, gold = set(key(r)), set(r["gold"])
        if cited:
            precisions.append(len(cited & gold) / len(cited))
        if gold:
            recalls.append(len(cited & gold) / len(gold))
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")  # noqa: E731
    return mean(precisions), mean(recalls)


def report(path: Path) -> None:
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    for strategy in dict.fromkeys(r["strategy"] for r in rows):
        mine = [r for r in rows if r["strategy"] == strategy]
        base = sum(r["match"] for r in mine) / len(mine)
        p, rc = precision_recall(mine, lambda r: r["before"])
        print(
            f"\n{strategy}: {len(mine)} answers, match {base:.3f}; citations before: "
            f"precision {p:.3f} recall {rc:.3f}"
        )
        for layer in LAYERS:
            yes = [r["match"] for r in mine if r[layer]["supported"]]
            no = [r["match"] for r in mine if not r[layer]["supported"]]
            scores = [r[layer]["score"] for r in mine]
            area = auroc(scores, [int(r["match"] > 0) for r in mine])
            ranked = sorted(mine, key=lambda r: -r[layer]["score"])
            top = ranked[: max(1, round(0.7 * len(mine)))]
            at70 = sum(r["match"] for r in top) / len(top)
            p, rc = precision_recall(mine, lambda r, layer=layer: r[layer]["cited"])
            m, lo, hi = bootstrap(yes)
            m2, lo2, hi2 = bootstrap(no)
            seconds = sum(r[layer]["seconds"] for r in mine) / len(mine)
            print(
                f"  {layer:8} supported {len(yes) / len(mine):.2f} of answers, match {m:.3f} "
                f"({lo:.3f}-{hi:.3f}); not supported match {m2:.3f} ({lo2:.3f}-{hi2:.3f}); "
                f"AUROC {area:.3f}; match at 70% coverage {at70:.3f} vs {base:.3f} "
                f"({at70 / base if base else float('nan'):.2f}x); citations precision {p:.3f} "
                f"recall {rc:.3f}; {seconds:.3f} s/answer"
            )


def checker_report(data: Path, path: Path) -> None:
    from ragteam.support.checker import load_checker
    from ragteam.training.support import balanced_accuracy
    from ragteam.training.support_data import claim_pairs, training_pairs

    checker = load_checker(path)
    held = [p for p in training_pairs(data) if p.split == "validation"]
    covid = claim_pairs(data / "formats" / "claims_train.jsonl", random.Random(0), ("covidfact",))
    covid = random.Random(0).sample(covid, min(600, len(covid)))
    for name, pairs in (("validation (in domain)", held), ("COVID-Fact (never trained on)", covid)):
        for source in sorted({p.source for p in pairs}) if len(pairs) == len(held) else [None]:
            part = [p for p in pairs if source is None or p.source == source]
            started = time.perf_counter()
            scores = checker.scores([p.claim for p in part], [p.passage for p in part])
            ms = 1000 * (time.perf_counter() - started) / len(part)
            labels = [p.label for p in part]
            print(
                f"{name} {source or ''}: {len(part)} pairs, balanced accuracy "
                f"{balanced_accuracy(scores, labels, checker.threshold):.3f} at "
                f"{checker.threshold}, AUROC {auroc(scores, labels):.3f}, {ms:.1f} ms/pair"
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("answers")
    a.add_argument("--index", required=True)
    a.add_argument("--questions", required=True)
    a.add_argument("--strategies", default="oner,smart")
    a.add_argument("--n", type=int, default=100)
    a.add_argument("--out", required=True)
    a.add_argument("--checker", required=True, help="from `ragteam train support`")
    r = sub.add_parser("report")
    r.add_argument("path", type=Path)
    c = sub.add_parser("checker")
    c.add_argument("--data", type=Path, required=True)
    c.add_argument("--checker", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "answers":
        run_answers(args)
    elif args.command == "report":
        report(args.path)
    else:
        checker_report(args.data, args.checker)


if __name__ == "__main__":
    main()
