"""The passage prior (`ragteam.reader.prior`) fitted on questions people wrote (issue 86): which
passage's span `read` answers with, the reader's probability weighed against the passage's place
in the order read. Fitted on docqa-train's held training files (the quarter the shipped reader
never trained on, by file hash, as bench/confidence_fit.py selects them), never the validation
files, never docqa-dev.

    python bench/prior_fit.py collect --data ../shared/data/docqa-train \\
        --work /tmp/dqt/people --out /tmp/dqt/prior.jsonl
    python bench/prior_fit.py fit --readings /tmp/dqt/prior.jsonl \\
        [--calibration ragteam/data/reader-minilm.calibration.json]

`collect` reads each held answerable question that is not yes/no as `read` does and keeps its
spans read (probability, the position of the span's passage in the order read, whether a gold
answer's words stand whole in it); it resumes where a killed run stopped. `fit` fits the prior
by `ragteam.reader.training.prior` on all of them, says how often the first span is right by
it and by probability alone, cross-validated by file (ten folds), and with `--calibration`
writes it there (the prior only orders the spans: the label's threshold and the confidence
stay as fitted)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from docqa_train import each_question

from ragteam.common.metrics import match
from ragteam.reader.polar import is_polar
from ragteam.reader.training.data import held_out
from ragteam.reader.training.people import VALIDATION, file_group
from ragteam.reader.training.prior import Spans, cross_validated, fit_prior, picked_right


def spans_of(question: dict, index) -> dict:  # noqa: ANN001
    """The spans `read` reads for `question`: each one's probability, position, rightness."""
    from ragteam.reader.stage import reading_for
    from ragteam.strategies.base import Context
    from ragteam.strategies.read import Read
    from ragteam.trace import Trace

    strategy = Read()
    ctx = Context(model=None, index=index, trace=Trace())
    found, _ = strategy.gathered(question["question"], ctx)
    reader = ctx.readers.get("")
    reading, passages = reading_for(
        question["question"], found, ctx.trace, reader, strategy.rules()
    )
    order = {p.id: n for n, p in enumerate(passages)}
    spans = sorted((s for s in reading.spans if s.kind == "span"), key=lambda s: -s.score)
    return {
        "scores": [s.score for s in spans],
        "positions": [order.get(s.passage_id, len(order)) for s in spans],
        "right": [bool(match(s.text, question["answers"])) for s in spans],
    }


def collect(args: argparse.Namespace) -> None:
    done = set()
    if args.out.exists():
        done = {json.loads(x)["id"] for x in args.out.read_text().splitlines() if x}
    with args.out.open("a", encoding="utf-8") as handle:
        for part, index, q in each_question(args.data, args.work):
            group = file_group(part, q)
            if q["id"] in done or not q["answers"] or not held_out(group, args.held):
                continue
            if q["file"] is None or Path(q["file"]).name in VALIDATION or is_polar(q["question"]):
                continue
            row = {"id": q["id"], "file": group} | spans_of(q, index)
            handle.write(json.dumps(row) + "\n")
            handle.flush()


def fit(args: argparse.Namespace) -> None:
    rows = [json.loads(x) for x in args.readings.read_text().splitlines() if x]
    questions = [
        Spans(r["file"], tuple(r["scores"]), tuple(r["positions"]), tuple(r["right"])) for r in rows
    ]
    prior = fit_prior(questions)
    with_prior, alone = cross_validated(questions)
    some = sum(any(q.right) for q in questions)
    print(f"{len(questions)} questions, a right span read for {some}; fitted {prior}")
    print(
        f"first span right, all fitted: {picked_right(prior, questions)} by the prior, "
        f"{picked_right(None, questions)} by probability"
    )
    print(f"cross-validated by file: {with_prior} by the prior, {alone} by probability")
    if args.calibration is not None:
        data = json.loads(args.calibration.read_text(encoding="utf-8"))
        data["prior"] = prior.to_json()
        data["prior_fitted_on"] = (
            f"docqa-train's held training files ({len(questions)} questions of `read`, not "
            f"yes/no): bench/prior_fit.py; first span right {with_prior} by it, {alone} by "
            "probability, cross-validated by file"
        )
        args.calibration.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.calibration}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("collect")
    a.add_argument("--data", type=Path, required=True, help="the docqa-train folder")
    a.add_argument("--work", type=Path, default=Path("/tmp/dqt/people"))
    a.add_argument("--out", type=Path, required=True)
    a.add_argument("--held", type=float, default=0.25, help="train reader's --people-held")
    b = sub.add_parser("fit")
    b.add_argument("--readings", type=Path, required=True)
    b.add_argument("--calibration", type=Path, help="write the prior there")
    args = parser.parse_args()
    collect(args) if args.command == "collect" else fit(args)


if __name__ == "__main__":
    main()
