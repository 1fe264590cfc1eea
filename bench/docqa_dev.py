"""docqa-dev: questions people wrote over real manuals, the yardstick of the default answer.

The set is not shipped (it is for development only, never for training or fitting): name its
folder, which holds `files/` and `questions.jsonl` (90 answerable and 11 unanswerable questions
over 10 manuals: PDF, Sphinx/Texinfo/DocBook/AsciiDoc HTML, Markdown, reST).

    python bench/docqa_dev.py run --data ../shared/data/docqa-dev --work /tmp/docqa-dev --tag read
    python bench/docqa_dev.py report --work /tmp/docqa-dev --paired-with round5

`run` syncs `files/` into WORK/ix (once, with the defaults `ragteam index sync` uses) and
appends one row per question to WORK/answers_TAG.jsonl as it goes (a stopped run resumes).
`--strategy` and `--opt KEY=VALUE` say what answers (default: `read` as shipped); `--tag`
names the run. Reported per kind and per format: answer match (a gold answer's words stand
whole in the answer) and token F1; the gold locator (file, and page for a PDF or the innermost
heading otherwise) among the retrieved passages at 1 and 5; the label: how many answers are
labelled supported, how often those are right, and the AUROC of the support score; with
`--abstain`'s rule, the share of the unanswerable declined and of the answerable refused; and
paired bootstrap CIs of match against another run."""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from doc_answers import bootstrap  # the paired bootstrap the document benchmarks share

from ragteam import answer
from ragteam.asking.posed import would_withhold
from ragteam.common.metrics import auroc, f1_score, match
from ragteam.retrieval import load_index, sync_folder

FORMATS = {".pdf": "pdf", ".html": "html", ".md": "markdown", ".rst": "rst"}


def _heading(text: str) -> str:
    """A heading compared without case and the link marks generators add (Sphinx's "¶" or an
    icon font's glyph), so that runs of older code are scored alike."""
    return " ".join(re.sub("[\u00b6\ue000-\uf8ff]", " ", text).split()).lower()


def at_gold(locator, q: dict) -> bool:  # noqa: ANN001
    """Whether `locator` stands at the question's gold place: its file and, for a PDF, its
    page; otherwise its innermost heading among the locator's headings."""
    if locator is None or q["file"] is None:
        return False
    if Path(locator.source).name != Path(q["file"]).name:
        return False
    if q["page"] is not None:
        return locator.page == q["page"]
    inner = _heading(q["section"].split(" > ")[-1]) if q["section"] else ""
    return not inner or inner in {_heading(h) for h in locator.section}


def one(index, q: dict, strategy: str, options: dict[str, str]) -> dict:  # noqa: ANN001
    hits = index.retrieve(q["question"], k=5)
    started = time.perf_counter()
    result = answer(q["question"], index=index, strategy=strategy, options=options)
    seconds = time.perf_counter() - started
    golds = q["answers"]
    cited = [index.passage(c.passage_id) for c in result.citations]
    evidence = result.evidence[0] if result.evidence else None
    return {
        "id": q["id"],
        "kind": q["kind"],
        "format": FORMATS.get(Path(q["file"] or "").suffix, "none"),
        "answer": result.text,
        "match": match(result.text, golds) if golds else 0.0,
        "f1": f1_score(result.text, golds) if golds else 0.0,
        "r1": bool(hits) and at_gold(hits[0].locator, q),
        "r5": any(at_gold(h.locator, q) for h in hits),
        "cited_at_gold": bool(cited) and cited[0] is not None and at_gold(cited[0].locator, q),
        "found_at_gold": evidence is not None
        and at_gold(index.passage(evidence.passage_id).locator, q),
        "declined": would_withhold(result),
        "unmentioned": list(result.unmentioned),  # names no passage mentions (the gate's)
        "label": result.grounding().level,
        "score": result.support.score if result.support is not None else None,
        # every sentence backed by a passage (the label before the reader's second check on a
        # written answer), and that check: would the reader give it with confidence
        "backed": result.support is not None
        and bool(result.support.sentences)
        and all(s.supported for s in result.support.sentences),
        "sure": result.support.sure if result.support is not None else None,
        "confidence": evidence.score if evidence is not None else None,
        # the answerability head's "no answer" over every passage the answer was read from
        # (the trace's last reading), what `--abstain`'s threshold is compared with and fitted
        # on (bench/abstain_fit.py); runs before §64 recorded the first reading's
        "no_answer": next(
            (s.output["no_answer"] for s in reversed(result.trace.steps) if s.kind == "read"),
            None,
        ),
        "seconds": round(seconds, 3),
    }


def index_of(data: Path, work: Path):  # noqa: ANN201
    if not (work / "ix").exists():
        work.mkdir(parents=True, exist_ok=True)
        sync_folder(data / "files", work / "ix")
    return load_index(work / "ix")


def run(args: argparse.Namespace) -> None:
    index = index_of(args.data, args.work)
    qs = [json.loads(x) for x in (args.data / "questions.jsonl").read_text().splitlines() if x]
    options = dict(o.split("=", 1) for o in args.opt)
    out = args.work / f"answers_{args.tag or args.strategy}.jsonl"
    done = {json.loads(x)["id"] for x in out.read_text().splitlines()} if out.exists() else set()
    with out.open("a", encoding="utf-8") as handle:
        for n, q in enumerate([q for q in qs if q["id"] not in done], 1):
            handle.write(json.dumps(one(index, q, args.strategy, options)) + "\n")
            handle.flush()
            if n % 10 == 0:
                print(f"{out.stem}: {len(done) + n}/{len(qs)}", flush=True)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _rows(work: Path) -> dict[str, dict[str, dict]]:
    runs = {}
    for path in sorted(work.glob("answers_*.jsonl")):
        rows = [json.loads(x) for x in path.read_text().splitlines() if x]
        runs[path.stem.removeprefix("answers_")] = {r["id"]: r for r in rows}
    return runs


def _table(runs: dict[str, dict[str, dict]], field: str) -> None:
    groups = sorted({r[field] for rows in runs.values() for r in rows.values()} - {"none"})
    print(f"| run | {field} | n | match | F1 | locator @1 / @5 | found at gold | s/q |")
    print("|---|---|---|---|---|---|---|---|")
    for name, rows in runs.items():
        for group in [*groups, "all answerable"]:
            got = [
                r
                for r in rows.values()
                if r[field] == group or (group == "all answerable" and r["format"] != "none")
            ]
            if got:
                print(
                    f"| {name} | {group} | {len(got)} | "
                    f"{sum(r['match'] for r in got):.0f} ({_mean([r['match'] for r in got]):.3f})"
                    f" | {_mean([r['f1'] for r in got]):.3f} | {_mean([r['r1'] for r in got]):.2f}"
                    f" / {_mean([r['r5'] for r in got]):.2f} | "
                    f"{_mean([r['found_at_gold'] for r in got]):.2f} | "
                    f"{_mean([r['seconds'] for r in got]):.2f} |"
                )


def _label_lines(name: str, rows: dict[str, dict]) -> None:
    answerable = [r for r in rows.values() if r["format"] != "none"]
    unanswerable = [r for r in rows.values() if r["format"] == "none"]
    green = [r for r in answerable if r["label"] == "supported"]
    scores = [r["score"] or 0.0 for r in answerable]
    print(
        f"{name}: label supported on {len(green)} of {len(answerable)} answerable, right "
        f"{sum(r['match'] for r in green):.0f} ({_mean([r['match'] for r in green]):.2f}); "
        f"AUROC of the support score {auroc(scores, [int(r['match']) for r in answerable]):.3f}; "
        f"unanswerable labelled supported "
        f"{sum(r['label'] == 'supported' for r in unanswerable)} of {len(unanswerable)}; "
        f"--abstain declines {_mean([r['declined'] for r in unanswerable]):.2f} of the "
        f"unanswerable and {_mean([r['declined'] for r in answerable]):.2f} of the answerable"
    )


def report(args: argparse.Namespace) -> None:
    runs = _rows(args.work)
    if args.runs:
        runs = {k: runs[k] for k in args.runs.split(",")}
    _table(runs, "kind")
    print()
    _table(runs, "format")
    print()
    for name, rows in runs.items():
        _label_lines(name, rows)
    base = runs.get(args.paired_with)
    for name, rows in runs.items():
        if base is None or name == args.paired_with:
            continue
        ids = [i for i in rows if i in base and rows[i]["format"] != "none"]
        for key in ("match", "f1"):
            mean, low, high = bootstrap([float(rows[i][key]) - float(base[i][key]) for i in ids])
            print(
                f"{name} - {args.paired_with} {key} on {len(ids)} answerable: {mean:+.3f} "
                f"({low:+.3f} to {high:+.3f})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("run")
    a.add_argument("--data", type=Path, required=True, help="the docqa-dev folder")
    a.add_argument("--work", type=Path, default=Path("/tmp/docqa-dev"))
    a.add_argument("--strategy", default="read")
    a.add_argument("--opt", action="append", default=[], help="KEY=VALUE, the strategy's option")
    a.add_argument("--tag", default="", help="the run's name (default: the strategy's)")
    b = sub.add_parser("report")
    b.add_argument("--work", type=Path, default=Path("/tmp/docqa-dev"))
    b.add_argument("--runs", default="", help="the runs to show, comma-separated (default: all)")
    b.add_argument("--paired-with", default="round5")
    args = parser.parse_args()
    run(args) if args.command == "run" else report(args)


if __name__ == "__main__":
    main()
