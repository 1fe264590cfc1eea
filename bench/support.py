"""Is the support label worth reading? Answers of real strategies on dev300 (gold answers and
gold supporting passages), each checked by the lexical layer and by the trained checker.

    python bench/support.py answers --index IDX --questions bench/data/hotpotqa/dev300.jsonl \\
        --strategies oner,smart --n 100 --checker CHECKER --out /tmp/support/answers.jsonl
    python bench/support.py report /tmp/support/answers.jsonl [--paired-with OTHER.jsonl]
    python bench/support.py checker --data ../shared/data/train --checker CHECKER
    python bench/support.py train-questions --data ../shared/data/train --out train.jsonl
    python bench/support.py rescore ANSWERS --index IDX --questions Q [--checker C] \\
        [--judge embedded] --out NEW
    python bench/support.py without-gold --corpus CORPUS --questions Q --n 100 --out LESS
    python bench/support.py refusal ANSWERS_WHOLE_INDEX ANSWERS_INDEX_WITHOUT_GOLD

`answers` runs each strategy once with support off (its own citations: "before"), then checks
the same answer with each layer (no second model call); rows are appended and fsynced, so a
killed run resumes. `report` prints, per strategy and layer: the share labelled supported and
their answer match with a bootstrap CI, the same for not supported, AUROC of the support score
for answer correctness, accuracy at 70% coverage against answering everything, and citation
precision/recall against the gold supporting passages, before and after; with
`--paired-with`, each strategy's F1 and match minus those of the same strategy on the same
questions in the other file (e.g. the same code with other reader weights), with a bootstrap CI.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

from ragteam import answer
from ragteam.agents.judge import judge_with
from ragteam.agents.role import Solo
from ragteam.common.metrics import auroc, f1_score, match
from ragteam.llm import load_model
from ragteam.retrieval import load_index
from ragteam.support.stage import check_support
from ragteam.trace import Trace
from ragteam.types import Evidence, SupportSettings

LAYERS = ("lexical", "checker", "reader")
ALL_LAYERS = (*LAYERS, "llm")


def run_answers(args: argparse.Namespace) -> None:
    index = load_index(args.index)
    rows = [json.loads(x) for x in Path(args.questions).read_text().splitlines() if x.strip()]
    claims = [r for r in rows if r.get("label") in ("true", "false")]
    if claims:  # a true/false verdict is not checked (its label is `unchecked`)
        raise SystemExit(
            f"{len(claims)} rows of {args.questions} are claims to judge true or false: the "
            "support stage does not check verdicts, so this benchmark has nothing to measure"
        )
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
                options = dict(o.split("=", 1) for o in args.opt)
                found = one(index, strategy, row, args.checker, options)
                handle.write(json.dumps(found) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
                print(f"{strategy} {n}/{len(rows)}", file=sys.stderr, flush=True)


def one(index, strategy: str, row: dict, checker: str, options: dict | None = None) -> dict:  # noqa: ANN001
    started = time.perf_counter()
    result = answer(row["question"], index=index, strategy=strategy, support="off", options=options)
    seconds = time.perf_counter() - started
    passages = searched(result, index)
    out = {
        "id": row["id"],
        "strategy": strategy,
        "answer": result.text,
        "match": match(result.text, row["answers"]),
        "f1": f1_score(result.text, row["answers"]),
        "gold": row.get("supporting_ids", []),
        "before": [c.passage_id for c in result.citations],
        "read": [p.id for p in passages],
        "seconds": round(seconds, 3),
        "evidence": [e.to_dict() for e in result.evidence],
    }
    evidence = tuple(result.evidence)
    return {**out, **checked(row["question"], result.text, passages, checker, None, evidence)}


def searched(result, index) -> list:  # noqa: ANN001
    """What the answer read: its citations, then every passage its searches found (the
    answer's `work`, as the support stage has them)."""
    ids = [c.passage_id for c in result.citations] + list(result.work.passages)
    found = (index.passage(pid) for pid in dict.fromkeys(ids))
    return [p for p in found if p is not None]


def checked(
    question: str, text: str, passages: list, checker: str, judge_model=None, evidence=()
) -> dict:
    """Each layer's verdict on one answer, as a row records it; with `judge_model` also the
    `llm` layer, that model judging."""
    out = {}
    for layer in (*LAYERS, "llm") if judge_model is not None else LAYERS:
        started = time.perf_counter()
        judge = judge_with(Solo(judge_model, Trace()), question) if layer == "llm" else None
        found = check_support(
            question,
            text,
            passages,
            SupportSettings(layer=layer, checker_path=checker),
            judge=judge,
            evidence=evidence,
        )
        backed = bool(found.sentences) and all(s.supported for s in found.sentences)
        out[layer] = {
            "score": found.score,
            # what the label says: every sentence backed, and (the reader layer, for a written
            # answer) the reader sure it would give it
            "supported": backed and found.sure is not False,
            "backed": backed,
            "sure": found.sure,
            "any": any(s.supported for s in found.sentences),
            "cited": found.cited,
            "seconds": round(time.perf_counter() - started, 4),
        }
    return out


def rescore(args: argparse.Namespace) -> None:
    """The rows of `answers` checked again by this code's layers (the same answers, the same
    passages read: no model call), written to `out`."""
    index = load_index(args.index)
    questions = {}
    for line in Path(args.questions).read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            questions[row["id"]] = row["question"]
    rows = [json.loads(x) for x in Path(args.answers).read_text().splitlines() if x.strip()]
    judge_model = load_model(args.judge) if args.judge else None
    with Path(args.out).open("w", encoding="utf-8") as handle:
        for n, row in enumerate(rows, start=1):
            passages = [index.passage(i) for i in row["read"]]
            evidence = tuple(Evidence(**e) for e in row.get("evidence", []))
            again = checked(
                questions[row["id"]], row["answer"], passages, args.checker, judge_model, evidence
            )
            print(f"rescored {n}/{len(rows)}", file=sys.stderr, flush=True)
            handle.write(json.dumps({**row, **again}) + "\n")


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


COVERAGES = (0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def accuracy_at(pairs: list[tuple[float, float]], coverage: float) -> float:
    """Mean match of the `coverage` share of answers with the highest scores (answering only
    those, abstaining on the rest); answers tied at the cut count in proportion, so the order
    of tied rows does not decide."""
    want = max(1.0, coverage * len(pairs))
    taken = total = 0.0
    for score in sorted({s for s, _ in pairs}, reverse=True):
        group = [m for s, m in pairs if s == score]
        share = min(1.0, (want - taken) / len(group))
        taken += share * len(group)
        total += share * sum(group)
        if taken >= want:
            break
    return total / taken


def paired(path: Path, other: Path) -> None:
    """F1 and match of `path` minus `other`, per strategy, on the questions both answered."""
    load = lambda p: {  # noqa: E731
        (r["strategy"], r["id"]): r for r in map(json.loads, p.read_text().splitlines()) if r
    }
    mine, base = load(path), load(other)
    for strategy in dict.fromkeys(s for s, _ in mine):
        common = [k for k in mine if k[0] == strategy and k in base]
        for measure in ("f1", "match"):
            diff = bootstrap([float(mine[k][measure]) - float(base[k][measure]) for k in common])
            print(
                f"{strategy} {measure} minus {other.name} on {len(common)}: "
                f"{diff[0]:+.3f} ({diff[1]:+.3f} to {diff[2]:+.3f})"
            )


def report(path: Path) -> None:
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    for strategy in dict.fromkeys(r["strategy"] for r in rows):
        mine = [r for r in rows if r["strategy"] == strategy]
        base = sum(r["match"] for r in mine) / len(mine)
        p, rc = precision_recall(mine, lambda r: r["before"])
        f1, f1_lo, f1_hi = bootstrap([r.get("f1", float("nan")) for r in mine])
        seconds = sum(r["seconds"] for r in mine) / len(mine)
        print(
            f"\n{strategy}: {len(mine)} answers, match {base:.3f}, F1 {f1:.3f} "
            f"({f1_lo:.3f}-{f1_hi:.3f}), {seconds:.2f} s/question; citations before: "
            f"precision {p:.3f} recall {rc:.3f}"
        )
        for layer in [x for x in ALL_LAYERS if x in mine[0]]:
            yes = [r["match"] for r in mine if r[layer]["supported"]]
            no = [r["match"] for r in mine if not r[layer]["supported"]]
            scores = [r[layer]["score"] for r in mine]
            area = auroc(scores, [int(r["match"] > 0) for r in mine])
            pairs = [(r[layer]["score"], r["match"]) for r in mine]
            at70 = accuracy_at(pairs, 0.7)
            curve = ", ".join(f"{c:.0%} {accuracy_at(pairs, c):.3f}" for c in COVERAGES)
            p, rc = precision_recall(mine, lambda r, layer=layer: r[layer]["cited"])
            m, lo, hi = bootstrap(yes)
            m2, lo2, hi2 = bootstrap(no)
            seconds = sum(r[layer]["seconds"] for r in mine) / len(mine)
            print(
                f"  {layer:8} supported {len(yes) / len(mine):.2f} of answers, match {m:.3f} "
                f"({lo:.3f}-{hi:.3f}); not supported match {m2:.3f} ({lo2:.3f}-{hi2:.3f}); "
                f"AUROC {area:.3f}; match at 70% coverage {at70:.3f} vs {base:.3f} "
                f"({at70 / base if base else float('nan'):.2f}x); citations precision {p:.3f} "
                f"recall {rc:.3f}; {seconds:.3f} s/answer\n           match by coverage: {curve}"
            )


def checker_report(data: Path, path: Path) -> None:
    from ragteam.support.checker import load_checker
    from ragteam.support.training.checker import balanced_accuracy
    from ragteam.support.training.data import claim_pairs, training_pairs

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


def train_questions(data: Path, out: Path) -> None:
    """dev300-style rows (id, question, answers, supporting_ids) of the HotpotQA training
    questions in `data` (hotpotqa_train.jsonl), their gold passages found by title in
    train_corpus.jsonl: answers to these fit the support score's design, never dev300's."""
    ids: dict[str, list[str]] = {}
    for line in (data / "train_corpus.jsonl").read_text().splitlines():
        passage = json.loads(line)
        ids.setdefault(passage["title"], []).append(passage["id"])
    rows = []
    for line in (data / "hotpotqa_train.jsonl").read_text().splitlines():
        row = json.loads(line)
        titles = dict.fromkeys(title for title, _n in row["supporting_facts"])
        gold = [i for t in titles for i in ids[t]]
        rows.append({**{k: row[k] for k in ("id", "question", "answers")}, "supporting_ids": gold})
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))


def without_gold(corpus: Path, questions: Path, n: int, out: Path) -> None:
    """`corpus` less the gold supporting passages of the first `n` questions: asked of an
    index of it, those questions have no answer in the documents (Trust-Score's refusal test)."""
    rows = [json.loads(x) for x in questions.read_text().splitlines() if x.strip()][:n]
    gold = {i for r in rows for i in r["supporting_ids"]}
    lines = [x for x in corpus.read_text().splitlines() if x.strip()]
    kept = [x for x in lines if json.loads(x)["id"] not in gold]
    out.write_text("\n".join(kept) + "\n")
    print(f"{len(gold)} gold passages of {len(rows)} questions left out; {len(kept)} kept")


def refusal(answerable: Path, unanswerable: Path) -> None:
    """Grounded refusal (Trust-Score): each layer refuses when it finds no sentence supported
    (what `abstain=true` withholds). F1 of refusing on the questions whose gold passages are
    gone, F1 of answering on those whose are there, and their mean; "before" never refuses."""
    have = [json.loads(x) for x in answerable.read_text().splitlines() if x.strip()]
    gone = [json.loads(x) for x in unanswerable.read_text().splitlines() if x.strip()]
    for strategy in dict.fromkeys(r["strategy"] for r in gone):
        ids = {r["id"] for r in gone if r["strategy"] == strategy}
        yes = [r for r in have if r["strategy"] == strategy and r["id"] in ids]
        no = [r for r in gone if r["strategy"] == strategy]
        print(f"\n{strategy}: {len(yes)} answerable, {len(no)} unanswerable")
        for layer in ("before", *[x for x in ALL_LAYERS if x in no[0]]):
            no_refused = sum(refuses(r, layer) for r in no)
            yes_refused = sum(refuses(r, layer) for r in yes)
            f_ref = f1(no_refused, yes_refused, len(no))
            f_ans = f1(len(yes) - yes_refused, len(no) - no_refused, len(yes))
            right = [r["match"] for r in yes if not refuses(r, layer)]
            print(
                f"  {layer:8} refuses {no_refused}/{len(no)} unanswerable, "
                f"{yes_refused}/{len(yes)} answerable; F1 refuse {f_ref:.3f}, "
                f"F1 answer {f_ans:.3f}, grounded refusal {(f_ref + f_ans) / 2:.3f}; match of "
                f"the answerable it answers {sum(right) / max(1, len(right)):.3f}"
            )


def refuses(row: dict, layer: str) -> bool:
    """What `abstain=true` withholds: an answer none of whose sentences is supported."""
    return layer != "before" and not row[layer]["any"]


def f1(hits: int, false_alarms: int, relevant: int) -> float:
    chosen = hits + false_alarms
    if not hits:
        return 0.0
    precision, recall = hits / chosen, hits / relevant
    return 2 * precision * recall / (precision + recall)


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("answers")
    a.add_argument("--index", required=True)
    a.add_argument("--questions", required=True)
    a.add_argument("--strategies", default="oner,smart")
    a.add_argument("--n", type=int, default=100)
    a.add_argument("--out", required=True)
    a.add_argument("--opt", action="append", default=[], help="KEY=VALUE, the strategies' option")
    a.add_argument(
        "--checker", default="", help="from `ragteam train support` (none: lexical decides)"
    )
    r = sub.add_parser("report")
    r.add_argument("path", type=Path)
    r.add_argument("--paired-with", type=Path, help="answers of the same strategies to pair with")
    c = sub.add_parser("checker")
    c.add_argument("--data", type=Path, required=True)
    c.add_argument("--checker", type=Path, required=True)
    t = sub.add_parser("train-questions")
    t.add_argument("--data", type=Path, required=True, help="../shared/data/train")
    t.add_argument("--out", type=Path, required=True)
    s = sub.add_parser("rescore")
    s.add_argument("answers", type=Path)
    s.add_argument("--index", required=True)
    s.add_argument("--questions", required=True)
    s.add_argument("--checker", default="")
    s.add_argument("--judge", default="", help="a model spec for the llm layer (embedded, ...)")
    s.add_argument("--out", required=True)
    w = sub.add_parser("without-gold")
    w.add_argument("--corpus", type=Path, required=True)
    w.add_argument("--questions", type=Path, required=True)
    w.add_argument("--n", type=int, default=100)
    w.add_argument("--out", type=Path, required=True)
    g = sub.add_parser("refusal")
    g.add_argument("answerable", type=Path, help="answers on the whole index")
    g.add_argument("unanswerable", type=Path, help="answers on the index without gold")
    args = parser.parse_args()
    if args.command == "without-gold":
        return without_gold(args.corpus, args.questions, args.n, args.out)
    if args.command == "rescore":
        return rescore(args)
    if args.command == "refusal":
        return refusal(args.answerable, args.unanswerable)
    if args.command == "train-questions":
        train_questions(args.data, args.out)
    elif args.command == "answers":
        run_answers(args)
    elif args.command == "report":
        report(args.path)
        if args.paired_with:
            paired(args.path, args.paired_with)
    else:
        checker_report(args.data, args.checker)


if __name__ == "__main__":
    main()
