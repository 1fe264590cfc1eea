"""The document QA benchmark: every strategy over the folder and questions that
bench/doc_qa_build.py made, reported per format, with paired CIs against a baseline.

    python bench/doc_qa_build.py --work /tmp/docqa
    python bench/doc_qa.py run --work /tmp/docqa --strategies read,oner,smart
    python bench/doc_qa.py report --work /tmp/docqa --paired-with oner
    python bench/doc_qa.py run --work /tmp/docqa --strategies read --opt key_lines=true --tag keys

`run` appends one line per question to WORK/answers_STRATEGY.jsonl as it goes, in a seeded
order (a stopped run has answered a sample of every format, and resumes where it stopped).
Each answer is checked by the default support layer; "declined" is what `--abstain` would do
with it: no passage supports it and the reader did not find its words, so it is withheld
(`answering.would_withhold`).
Reported per format and strategy: the gold locator (file and page, section or slide) among the
retrieved passages at 1 and 5; answer match and token F1; of the matching answers, the share
whose first citation stands at a gold locator; for the unanswerable, the share declined; for
the answerable, the share declined; seconds per question; and the label shown (supported or
not): how often a supported answer is right, and the AUROC of its support score."""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from doc_answers import bootstrap  # the paired bootstrap the document benchmarks share

from ragteam import answer
from ragteam.asking.posed import would_withhold
from ragteam.common.metrics import auroc, f1_score, match
from ragteam.retrieval import load_index


def at_gold(locator, gold: list[dict]) -> bool:  # noqa: ANN001
    """Whether `locator` stands where a gold locator says: the same file and, as the gold one
    names them, the same page, slide or section. A gold locator that names none of them names
    the file alone (the HTML questions': recorded when the HTML converter gave no sections)."""
    if locator is None:
        return False
    for g in gold:
        if g["source"] != locator.source:
            continue
        if g["page"] is not None:
            if locator.page == g["page"]:
                return True
        elif g["slide"] is not None:
            if locator.slide == g["slide"]:
                return True
        elif not g["section"] or list(locator.section) == g["section"]:
            return True
    return False


def one(index, q: dict, strategy: str, options: dict[str, str] | None = None) -> dict:  # noqa: ANN001
    hits = index.retrieve(q["question"], k=5)
    row = {
        "id": q["id"],
        "r1": bool(hits) and at_gold(hits[0].locator, q["gold"]),
        "r5": any(at_gold(h.locator, q["gold"]) for h in hits),
    }
    started = time.perf_counter()
    result = answer(q["question"], index=index, strategy=strategy, options=options)
    cited = [index.passage(c.passage_id) for c in result.citations]
    return row | {
        "answer": result.text,
        "match": match(result.text, [q["answer"]]),
        "f1": f1_score(result.text, [q["answer"]]),
        "first_at_gold": bool(cited)
        and cited[0] is not None
        and at_gold(cited[0].locator, q["gold"]),
        "declined": would_withhold(result),
        # the label shown beside the answer, and the support score it was decided on
        "label": result.grounding().level,
        "score": result.support.score if result.support is not None else None,
        # where the reader found the words it answers with (its best span, gated or not)
        "found_at_gold": bool(result.evidence)
        and at_gold(index.passage(result.evidence[0].passage_id).locator, q["gold"]),
        "seconds": round(time.perf_counter() - started, 3),
    }


def run(
    work: Path, strategies: list[str], limit: int, options: dict[str, str], tag: str = ""
) -> None:
    """Each strategy (with `options`, the strategy's own) over the questions, into
    WORK/answers_STRATEGY.jsonl, or answers_STRATEGY-TAG.jsonl with `tag`."""
    index = load_index(work / "ix")
    qs = [json.loads(x) for x in (work / "questions.jsonl").read_text().splitlines() if x]
    for strategy in strategies:
        out = work / f"answers_{strategy}{'-' + tag if tag else ''}.jsonl"
        done = (
            {json.loads(x)["id"] for x in out.read_text().splitlines()} if out.exists() else set()
        )
        # in a seeded order, so that a run stopped early has answered a sample of every format
        todo = [q for q in qs if q["id"] not in done]
        random.Random(3).shuffle(todo)
        todo = todo[: limit or None]
        with out.open("a", encoding="utf-8") as handle:
            for n, q in enumerate(todo, 1):
                handle.write(json.dumps(one(index, q, strategy, options)) + "\n")
                handle.flush()
                if n % 10 == 0:
                    print(f"{strategy}: {len(done) + n}/{len(qs)}", flush=True)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def report(work: Path, paired_with: str) -> None:
    qs = {
        q["id"]: q
        for q in map(json.loads, (work / "questions.jsonl").read_text().splitlines())
        if q
    }
    runs = {}
    for path in sorted(work.glob("answers_*.jsonl")):
        rows = [json.loads(x) for x in path.read_text().splitlines() if x]
        runs[path.stem.removeprefix("answers_")] = {r["id"]: r for r in rows}
    formats = sorted({q["format"] for q in qs.values()})
    print(
        "| strategy | format | n | right locator @1 / @5 | match | F1 | first citation at gold "
        "(of matches) | found at gold (of matches) | declined | s/q |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for strategy, rows in runs.items():
        for fmt in [*formats, "all answerable"]:
            ids = [
                i
                for i in rows
                if (qs[i]["format"] == fmt)
                or (fmt == "all answerable" and qs[i]["format"] != "none")
            ]
            if not ids:
                continue
            got = [rows[i] for i in ids]
            matched = [r for r in got if r["match"]]
            print(
                f"| {strategy} | {fmt} | {len(got)} | {_mean([r['r1'] for r in got]):.2f} / "
                f"{_mean([r['r5'] for r in got]):.2f} | {_mean([r['match'] for r in got]):.3f} | "
                f"{_mean([r['f1'] for r in got]):.3f} | "
                f"{_mean([r['first_at_gold'] for r in matched]):.2f} ({len(matched)}) | "
                f"{_mean([r.get('found_at_gold', False) for r in matched]):.2f} | "
                f"{_mean([r['declined'] for r in got]):.2f} | "
                f"{_mean([r['seconds'] for r in got]):.2f} |"
            )
    for strategy, rows in runs.items():
        answerable = [r for i, r in rows.items() if qs[i]["format"] != "none"]
        given = [r for r in answerable if not r["declined"]]
        held = [r for r in answerable if r["declined"]]
        print(
            f"{strategy}: {len(given)} answerable given, right "
            f"{_mean([r['match'] for r in given]):.2f}; {len(held)} declined, would have been "
            f"right {_mean([r['match'] for r in held]):.2f}"
        )
    for strategy, rows in runs.items():
        _label_line(strategy, [r for i, r in rows.items() if qs[i]["format"] != "none"])
    base = runs.get(paired_with)
    if base is None:
        return
    for strategy, rows in runs.items():
        if strategy == paired_with:
            continue
        ids = [i for i in rows if i in base and qs[i]["format"] != "none"]
        for key in ("match", "f1"):
            mean, low, high = bootstrap([float(rows[i][key]) - float(base[i][key]) for i in ids])
            print(
                f"{strategy} - {paired_with} {key} on {len(ids)} answerable: {mean:+.3f} "
                f"({low:+.3f} to {high:+.3f})"
            )


def _label_line(strategy: str, answerable: list[dict]) -> None:
    """How far the label shown is to be trusted: of the answerable questions' answers, the
    share labelled supported and how often those are right, and the AUROC of the support
    score for a right answer (rows from before the label was recorded are left out)."""
    labelled = [r for r in answerable if "label" in r]
    if not labelled:
        return
    green = [r for r in labelled if r["label"] == "supported"]
    scores = [r["score"] or 0.0 for r in labelled]
    print(
        f"{strategy} label: supported {len(green)} of {len(labelled)}, right "
        f"{_mean([r['match'] for r in green]):.2f} (the rest: "
        f"{_mean([r['match'] for r in labelled if r['label'] != 'supported']):.2f}); "
        f"AUROC of the support score {auroc(scores, [int(r['match']) for r in labelled]):.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("run")
    a.add_argument("--work", type=Path, default=Path("/tmp/docqa"))
    a.add_argument("--strategies", default="read,oner,smart")
    a.add_argument("--limit", type=int, default=0, help="questions per strategy this run (0: all)")
    a.add_argument("--opt", action="append", default=[], help="KEY=VALUE, the strategies' option")
    a.add_argument("--tag", default="", help="a name for the run, after the strategy's")
    b = sub.add_parser("report")
    b.add_argument("--work", type=Path, default=Path("/tmp/docqa"))
    b.add_argument("--paired-with", default="oner")
    args = parser.parse_args()
    if args.command == "run":
        options = dict(o.split("=", 1) for o in args.opt)
        run(args.work, args.strategies.split(","), args.limit, options, args.tag)
    else:
        report(args.work, args.paired_with)


if __name__ == "__main__":
    main()
