"""When `read`'s second search pays: fitted on training questions (issue 89 item 4, reading fewer
windows where the first ones settle the answer).

`read` searches a second time with the best spans of a first reading (`hops=2`), which reads
about 40% more tokens. `collect` answers each question with one search and with two, and
keeps the first reading's best probability; `fit` picks the lowest probability at or above
which one search loses no answer on the rows given (the `settle` option of `read`); `report`
says what a threshold does on other rows.

    python bench/settled_search.py collect --data ../shared/data/docqa-train \\
        --work /tmp/dqt/people --out /tmp/settle/docqa-train.jsonl          # training files
    ragteam index build bench/data/train/train_corpus.jsonl --out /tmp/hp/train-ix \\
        --retriever hybrid --passage-words 0
    python bench/settled_search.py collect --questions bench/data/train/hotpotqa_train.jsonl \\
        --index /tmp/hp/train-ix --out /tmp/settle/hotpotqa-train.jsonl
    python bench/settled_search.py fit /tmp/settle/docqa-train.jsonl /tmp/settle/hotpotqa-train.jsonl

Rows are written as they come (a stopped run resumes). docs/benchmarks.md §72."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from docqa_dev import index_of
from docqa_train import chosen

from ragteam import answer
from ragteam.common.metrics import f1_score, match
from ragteam.retrieval import load_index


def one(index, q: dict) -> dict:  # noqa: ANN001
    """`q` answered with one search and with two (settle off), and the first reading's best."""
    row: dict = {"id": q["id"]}
    for hops in (1, 2):
        started = time.process_time()
        result = answer(
            q["question"], index=index, strategy="read", options={"hops": hops, "settle": 1.0}
        )
        row[f"cpu{hops}"] = round(time.process_time() - started, 3)
        row[f"match{hops}"] = match(result.text, q["answers"])
        row[f"f1_{hops}"] = f1_score(result.text, q["answers"])
        if hops == 2:
            first = next(s for s in result.trace.steps if s.kind == "read")
            spans = first.output["spans"]
            row["first_best"] = spans[0]["score"] if spans else 0.0
    return row


def _collect(questions: list[dict], index, out: Path) -> None:  # noqa: ANN001
    done = set()
    if out.exists():
        done = {json.loads(x)["id"] for x in out.read_text().splitlines() if x}
    todo = [q for q in questions if q["id"] not in done and q["answers"]]
    with out.open("a", encoding="utf-8") as handle:
        for n, q in enumerate(todo, 1):
            handle.write(json.dumps(one(index, q)) + "\n")
            handle.flush()
            if n % 50 == 0:
                print(f"{out.name}: {n}/{len(todo)}", flush=True)


def collect(args: argparse.Namespace) -> None:
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.questions:
        rows = [json.loads(x) for x in args.questions.read_text().splitlines() if x]
        _collect(rows[: args.n or None], load_index(args.index), args.out)
        return
    for part in sorted(p for p in args.data.iterdir() if (p / "questions.jsonl").is_file()):
        rows = [json.loads(x) for x in (part / "questions.jsonl").read_text().splitlines() if x]
        for q in rows:
            q["id"] = f"{part.name}/{q['id']}"
        _collect(chosen(rows, args.split), index_of(part, args.work / part.name), args.out)


def right_at(rows: list[dict], settle: float) -> tuple[float, float, float]:
    """(answers right, share settled by one search, CPU-s a question) with `settle`."""
    right = cpu = settled = 0.0
    for r in rows:
        one_search = r["first_best"] >= settle
        settled += one_search
        right += r["match1"] if one_search else r["match2"]
        cpu += r["cpu1"] if one_search else r["cpu2"]
    n = max(1, len(rows))
    return right, settled / n, cpu / n


def _rows(paths: list[Path]) -> list[dict]:
    return [json.loads(x) for p in paths for x in p.read_text().splitlines() if x]


def fit(args: argparse.Namespace) -> None:
    rows = _rows(args.rows)
    never, _, cpu2 = right_at(rows, 2.0)
    print(f"{len(rows)} rows; two searches always: {never:.0f} right, {cpu2:.3f} CPU-s")
    print("| settle | right | settled | CPU-s a question |\n|---|---|---|---|")
    candidates = sorted({round(r["first_best"], 3) for r in rows} | {1.0})
    best = 1.0
    for t in reversed(candidates):
        right, share, cpu = right_at(rows, t)
        if right >= never:
            best = t
    for t in sorted({0.3, 0.5, 0.7, 0.8, 0.9, 0.95, best}):
        right, share, cpu = right_at(rows, t)
        print(f"| {t:.3f} | {right:.0f} | {share:.2f} | {cpu:.3f} |")
    print(f"fitted: settle = {best:.3f} (the lowest that loses no answer on these rows)")


def report(args: argparse.Namespace) -> None:
    rows = _rows(args.rows)
    for t in (2.0, args.settle):
        right, share, cpu = right_at(rows, t)
        print(f"settle {t}: {right:.0f} of {len(rows)} right, {share:.2f} settled, {cpu:.3f} CPU-s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--data", type=Path, help="the docqa-train folder (its parts)")
    c.add_argument("--work", type=Path, default=Path("/tmp/dqt/people"))
    c.add_argument("--split", choices=("train", "validation"), default="train")
    c.add_argument("--questions", type=Path, help="or: a questions file (question, answers)")
    c.add_argument("--index", type=Path, help="the index --questions are asked of")
    c.add_argument("--n", type=int, default=0, help="the first N questions only")
    c.add_argument("--out", type=Path, required=True)
    f = sub.add_parser("fit")
    f.add_argument("rows", type=Path, nargs="+")
    r = sub.add_parser("report")
    r.add_argument("rows", type=Path, nargs="+")
    r.add_argument("--settle", type=float, required=True)
    args = parser.parse_args()
    {"collect": collect, "fit": fit, "report": report}[args.command](args)


if __name__ == "__main__":
    main()
