"""docqa-train's validation files: questions people wrote over real manuals that no reader or
ranker here was trained or fitted on (the files its README names; `ragteam.reader.training.people`
leaves them out of training).

The set is not shipped: name its folder (PART/files, PART/questions.jsonl).

    python bench/docqa_train.py run --data ../shared/data/docqa-train --work W --tag read
    python bench/docqa_train.py report --work W --paired-with base

`run` syncs each part's files/ into WORK/PART/ix (the index `ragteam train reader --people`
builds its groups from, so it is synced once) and answers each validation question (and the
office part's unanswerable ones, which its README holds with the validation file), a row per
question in WORK/PART/answers_TAG.jsonl, resumable (bench/docqa_dev.py's `one`). `report` pools
the parts: per kind, per part (its validation file), the first five parts (the reading
issue's goal) and all ten, the label and `--abstain`, and paired bootstrap CIs against
another run. `--split train` answers the training files' questions instead (for fitting,
never for reporting); `--split held` only the training files a reader trained with `--people`
held out (for choosing between trained readers before the validation files are read)."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from doc_answers import bootstrap
from docqa_dev import FORMATS, index_of, one

from ragteam.reader.training.data import held_out
from ragteam.reader.training.people import file_group, is_validation
from ragteam.reader.training.settings import ReaderSettings

HELD = ReaderSettings().people_held  # the files `train reader --people` holds out

FIRST_FIVE = ("latex", "gnu", "python", "sysadmin", "office")
FORMATS.update({".txt": "text", ".docx": "docx", ".pptx": "pptx"})


def chosen(rows: list[dict], split: str, part: str) -> list[dict]:
    """The part's questions of `split`: validation (its validation file's, and the unanswerable
    ones of the office part, held with it), train (the rest), or held (the training files
    `train reader --people` holds out, HELD of them by file: no reader trained on them)."""

    kept = [q for q in rows if is_validation(part, q) == (split == "validation")]
    if split == "held":
        return [q for q in kept if held_out(file_group(part, q), HELD)]
    return kept


def each_question(data: Path, work: Path) -> Iterator[tuple[str, Any, dict]]:
    """Every question of docqa-train's parts (`data`), with its part's name and index (synced
    into WORK/PART/ix once); a line when each part is done."""
    for part in sorted(p for p in data.iterdir() if (p / "questions.jsonl").is_file()):
        index = index_of(part, work / part.name)
        started = time.perf_counter()
        for line in (part / "questions.jsonl").read_text().splitlines():
            if line.strip():
                yield part.name, index, json.loads(line)
        print(f"{part.name}: done in {time.perf_counter() - started:.0f} s", flush=True)


def run(args: argparse.Namespace) -> None:
    options = dict(o.split("=", 1) for o in args.opt)
    parts = sorted(p for p in args.data.iterdir() if (p / "questions.jsonl").is_file())
    for part in parts:
        if args.parts and part.name not in args.parts.split(","):
            continue
        work = args.work / part.name
        index = index_of(part, work)
        rows = [json.loads(x) for x in (part / "questions.jsonl").read_text().splitlines() if x]
        out = work / f"answers_{args.tag}.jsonl"
        done = (
            {json.loads(x)["id"] for x in out.read_text().splitlines()} if out.exists() else set()
        )
        started = time.perf_counter()
        todo = [
            q
            for q in chosen(rows, args.split, part.name)
            if q["id"] not in done and (not args.kind or q["kind"] == args.kind)
        ]
        with out.open("a", encoding="utf-8") as handle:
            for q in todo:
                row = one(index, q, args.strategy, options)
                row["part"] = part.name
                handle.write(json.dumps(row) + "\n")
                handle.flush()
        print(f"{part.name}: {len(todo)} answered in {time.perf_counter() - started:.0f} s")


def _rows(work: Path) -> dict[str, dict[str, dict]]:
    runs: dict[str, dict[str, dict]] = {}
    for path in sorted(work.glob("*/answers_*.jsonl")):
        name = path.stem.removeprefix("answers_")
        for line in path.read_text().splitlines():
            if line:
                row = json.loads(line)
                row.setdefault("part", path.parent.name)
                runs.setdefault(name, {})[row["id"]] = row
    return runs


def _line(name: str, group: str, got: list[dict]) -> str:
    right = sum(r["match"] for r in got)
    sure = [r for r in got if r["label"] == "supported"]
    return (
        f"| {name} | {group} | {len(got)} | {right:.0f} ({right / len(got):.3f}) | "
        f"{sum(r['f1'] for r in got) / len(got):.3f} | "
        f"{sum(r['r5'] for r in got) / len(got):.2f} | {len(sure)}, right "
        f"{sum(r['match'] for r in sure):.0f} |"
    )


def report(args: argparse.Namespace) -> None:
    runs = _rows(args.work)
    if args.runs:
        runs = {k: runs[k] for k in args.runs.split(",")}
    print("| run | group | n | right | F1 | gold in top 5 | labelled supported |")
    print("|---|---|---|---|---|---|---|")
    for name, rows in runs.items():
        answerable = [r for r in rows.values() if r["format"] != "none"]
        first = [r for r in answerable if r["part"] in FIRST_FIVE]
        groups = [("first five parts", first), ("all ten parts", answerable)]
        for field in ("kind", "part", "format"):
            for value in sorted({r[field] for r in answerable}):
                groups.append((f"{field} {value}", [r for r in answerable if r[field] == value]))
        for kind in sorted({r["kind"] for r in first}):
            groups.append((f"first five, {kind}", [r for r in first if r["kind"] == kind]))
        for group, got in groups:
            if got:
                print(_line(name, group, got))
    for name, rows in runs.items():
        answerable = [r for r in rows.values() if r["format"] != "none"]
        unanswerable = [r for r in rows.values() if r["format"] == "none"]
        green = [r for r in answerable if r["label"] == "supported"]
        print(
            f"{name}: supported {len(green)} of {len(answerable)}, right "
            f"{sum(r['match'] for r in green):.0f}; unanswerable labelled supported "
            f"{sum(r['label'] == 'supported' for r in unanswerable)} of {len(unanswerable)}; "
            f"--abstain declines {sum(r['declined'] for r in unanswerable)} of "
            f"{len(unanswerable)} unanswerable, {sum(r['declined'] for r in answerable)} of "
            f"{len(answerable)} answerable; "
            f"{sum(r['seconds'] for r in rows.values()) / len(rows):.2f} s/q"
        )
    base = runs.get(args.paired_with)
    for name, rows in runs.items():
        if base is None or name == args.paired_with:
            continue
        for label, parts in (("first five", FIRST_FIVE), ("all ten", None)):
            ids = [
                i
                for i in rows
                if i in base
                and rows[i]["format"] != "none"
                and (parts is None or rows[i]["part"] in parts)
            ]
            mean, low, high = bootstrap(
                [float(rows[i]["match"]) - float(base[i]["match"]) for i in ids]
            )
            print(
                f"{name} - {args.paired_with}, {label} ({len(ids)}): "
                f"{mean:+.3f} ({low:+.3f} to {high:+.3f})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("run")
    a.add_argument("--data", type=Path, required=True, help="the docqa-train folder")
    a.add_argument("--work", type=Path, default=Path("/tmp/dqt/people"))
    a.add_argument("--strategy", default="read")
    a.add_argument("--opt", action="append", default=[], help="KEY=VALUE, the strategy's option")
    a.add_argument("--tag", required=True, help="the run's name")
    a.add_argument("--parts", default="", help="only these parts, comma-separated")
    a.add_argument("--split", choices=("validation", "train", "held"), default="validation")
    a.add_argument("--kind", default="", help="only questions of this kind (e.g. yesno)")
    b = sub.add_parser("report")
    b.add_argument("--work", type=Path, default=Path("/tmp/dqt/people"))
    b.add_argument("--runs", default="", help="the runs to show, comma-separated (default: all)")
    b.add_argument("--paired-with", default="base")
    args = parser.parse_args()
    run(args) if args.command == "run" else report(args)


if __name__ == "__main__":
    main()
