"""What the fits on docqa-train's held training files share (bench/confidence_fit.py,
bench/prior_fit.py): each held question (the quarter of the training files the shipped reader
never trained on, by file hash; never a validation file's) read once into a JSONL that a killed
run resumes, then a fit over that file, behind one command line (`collect`, `fit`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from docqa_train import each_question

from ragteam.reader.training.data import held_out
from ragteam.reader.training.people import file_group, is_validation

Read = Callable[[dict, Any, str], "dict | None"]  # (question, its index, weights) -> a row, or skip


def read_as_read(question: str, index: Any, weights: str = "") -> tuple[Any, list, Any]:
    """The reading `read` answers `question` from over `index` (its passages found as `read`
    finds them), the passages read, and `read`'s rules; `weights`: a reader other than the
    shipped one (a candidate's file, its calibration beside it)."""
    from ragteam.reader.stage import reading_for
    from ragteam.strategies.base import Context
    from ragteam.strategies.read import Read
    from ragteam.trace import Trace

    strategy = Read(weights=weights)
    ctx = Context(model=None, index=index, trace=Trace())
    found, _ = strategy.gathered(question, ctx)
    rules = strategy.rules()
    reading, passages = reading_for(question, found, ctx.trace, ctx.readers.get(weights), rules)
    return reading, passages, rules


def write_fitted(calibration: Path, fitted: dict[str, Any]) -> None:
    """`fitted`'s keys set in the calibration file (its other keys kept)."""
    data = json.loads(calibration.read_text(encoding="utf-8"))
    data.update(fitted)
    calibration.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {calibration}")


def collect(data: Path, work: Path, out: Path, share: float, read: Read, weights: str) -> None:
    """`read`'s row of every held question not in `out` yet, appended with its id and file."""
    done = set()
    if out.exists():
        done = {json.loads(x)["id"] for x in out.read_text().splitlines() if x}
    with out.open("a", encoding="utf-8") as handle:
        for part, index, q in each_question(data, work):
            group = file_group(part, q)
            if q["id"] in done or not held_out(group, share):
                continue
            if is_validation(part, q):
                continue
            row = read(q, index, weights)
            if row is not None:
                handle.write(json.dumps({"id": q["id"], "file": group} | row) + "\n")
                handle.flush()


def main(doc: str, read: Read, fit: Callable[[list[dict], Path | None], None], writes: str) -> None:
    """The command line: `collect` (`read` over the held questions) or `fit` (`fit` over the
    rows collected, writing to `--calibration` if given: `writes` says what)."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("collect")
    a.add_argument("--data", type=Path, required=True, help="the docqa-train folder")
    a.add_argument("--work", type=Path, default=Path("/tmp/dqt/people"))
    a.add_argument("--out", type=Path, required=True)
    a.add_argument("--held", type=float, default=0.25, help="train reader's --people-held")
    a.add_argument("--weights", default="", help="a reader's weights (default: the shipped)")
    b = sub.add_parser("fit")
    b.add_argument("--readings", type=Path, required=True)
    b.add_argument("--calibration", type=Path, help=f"write {writes} there")
    args = parser.parse_args()
    if args.command == "collect":
        collect(args.data, args.work, args.out, args.held, read, args.weights)
    else:
        fit([json.loads(x) for x in args.readings.read_text().splitlines() if x], args.calibration)
