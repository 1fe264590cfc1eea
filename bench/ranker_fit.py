"""Fit the answer ranker (`ragteam.reader.ranker`) for a reader, on readings of docqa-train's
training questions that the reader was not trained on, and write it beside the weights.

    python bench/ranker_fit.py collect --data ../shared/data/docqa-train --weights W \\
        --work /tmp/dqt/people --examples /tmp/dqt/examples.jsonl [--files held|all]
    python bench/ranker_fit.py fit --examples /tmp/dqt/examples.jsonl --out W.ranker.json

`collect` reads, part by part, the questions of the training files (never the validation
files) that `ragteam train reader --people` held out of training (`--files held`, by the same
hash and share), or of every training file (`--files all`: for a reader that never saw
docqa-train), each searched and read as `read` does over WORK/PART/ix, one Example a line
(resumable). `fit` fits the two models and the label's threshold (cross-fitted by file) and
writes the ranker's JSON."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from docqa_dev import index_of

from ragteam.reader.training.data import held_out
from ragteam.reader.training.people import VALIDATION, file_group
from ragteam.reader.training.ranker import Example, example_of, fit_ranker


def example(question: dict, index, weights: Path, group: str) -> Example:  # noqa: ANN001
    """Search and read `question` (a docqa row) as `read` does with the reader `weights`."""
    from ragteam.reader.stage import reading_for
    from ragteam.strategies.base import Context
    from ragteam.strategies.read import Read, _earlier
    from ragteam.trace import Trace

    strategy = Read(weights=str(weights))
    ctx = Context(model=None, index=index, trace=Trace())  # reads only: no model
    found, _ = strategy.gathered(question["question"], ctx)
    reader = ctx.readers.get(weights)
    rules = strategy.rules()
    reading, passages = reading_for(question["question"], found, ctx.trace, reader, rules)
    return example_of(question, reading, passages, rules, _earlier(index), group)


def collect(args: argparse.Namespace) -> None:
    done = set()
    if args.examples.exists():
        done = {json.loads(x)["qid"] for x in args.examples.read_text().splitlines() if x}
    parts = sorted(p for p in args.data.iterdir() if (p / "questions.jsonl").is_file())
    with args.examples.open("a", encoding="utf-8") as handle:
        for part in parts:
            index = index_of(part, args.work / part.name)
            rows = [json.loads(x) for x in (part / "questions.jsonl").read_text().splitlines() if x]
            started, n = time.perf_counter(), 0
            for q in rows:
                group = file_group(part.name, q)
                if q["file"] is None or Path(q["file"]).name in VALIDATION or q["id"] in done:
                    continue
                if args.files == "held" and not held_out(group, args.held):
                    continue
                handle.write(json.dumps(example(q, index, args.weights, group).to_json()) + "\n")
                handle.flush()
                n += 1
            print(
                f"{part.name}: {n} questions in {time.perf_counter() - started:.0f} s", flush=True
            )


def abstain_threshold(examples: list[Example], refused: float = 0.10) -> float:
    """The answerability head's "no answer" probability at or above which at most `refused`
    of these answerable questions are declined (bench/abstain_fit.py's rule, on the same
    readings the ranker is fitted on: each example's features hold it as log-odds)."""
    import math

    def no_answer(e: Example) -> float:
        at = 2 if e.polar else 1  # POLAR_FEATURES / FEATURES index of the no-answer log-odds
        return 1 / (1 + math.exp(-e.rows[0][at])) if e.rows else 1.0

    values = sorted((no_answer(e) for e in examples), reverse=True)
    allowed = int(refused * len(values))
    return min(1.0, values[allowed] + 1e-6) if allowed < len(values) else 1.0


def fit(args: argparse.Namespace) -> None:
    examples = [
        Example.from_json(json.loads(x)) for x in args.examples.read_text().splitlines() if x
    ]
    ranker = fit_ranker(examples, args.precision)
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text(json.dumps(ranker.to_json(), indent=1) + "\n", encoding="utf-8")
    tmp.replace(args.out)
    print(f"wrote {args.out}")
    if args.calibration is not None:  # --abstain's threshold on the same held readings
        data = json.loads(args.calibration.read_text(encoding="utf-8"))
        was, data["abstain"] = data["abstain"], abstain_threshold(examples)
        data["abstain_fitted_on"] = (
            f"docqa-train's held training files ({len(examples)} answerable questions, "
            "at most 0.10 refused): bench/ranker_fit.py"
        )
        args.calibration.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"--abstain's threshold {was:.3f} -> {data['abstain']:.3f} in {args.calibration}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("collect")
    a.add_argument("--data", type=Path, required=True, help="the docqa-train folder")
    a.add_argument("--weights", type=Path, required=True, help="the reader's weights")
    a.add_argument("--work", type=Path, default=Path("/tmp/dqt/people"))
    a.add_argument("--examples", type=Path, required=True)
    a.add_argument("--files", choices=("held", "all"), default="held")
    a.add_argument("--held", type=float, default=0.25, help="train reader's --people-held")
    b = sub.add_parser("fit")
    b.add_argument("--examples", type=Path, required=True)
    b.add_argument("--out", type=Path, required=True, help="NAME.ranker.json beside the weights")
    b.add_argument("--precision", type=float, default=0.85)
    b.add_argument("--calibration", type=Path, help="refit --abstain's threshold in this file")
    args = parser.parse_args()
    collect(args) if args.command == "collect" else fit(args)


if __name__ == "__main__":
    main()
