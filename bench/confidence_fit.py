"""The reader's confidence model (`ragteam.reader.confidence`) refit on questions people wrote
(issue 86 item 5), and the label's threshold on its out-of-fold confidences: docqa-train's held
training files (the quarter the shipped reader never trained on, by file hash), never the
validation files, never docqa-dev.

    python bench/confidence_fit.py collect --data ../shared/data/docqa-train \\
        --work /tmp/dqt/people --out /tmp/dqt/confidence.jsonl
    python bench/confidence_fit.py fit --readings /tmp/dqt/confidence.jsonl \\
        [--calibration ragteam/data/reader-minilm.calibration.json]

`collect` answers each held question as `read` does and keeps what the confidence reads of the
answered span (`span_features`), the confidence it has now, whether the answer is right (a gold
answer's words whole in it) and whether the passages read hold a gold answer at all (an
unanswerable question's never do). `fit` fits the two-part model by the calibration's own
code (`fit_confidence`: folds by file, L2 chosen by out-of-fold AUROC), compares its
out-of-fold AUROC with the confidence of now on the same answers, and sets the label's
threshold on the out-of-fold confidences (precision 0.80, at least 10 labelled: the
calibration's rule); `--calibration` writes both there."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from docqa_train import each_question

from ragteam.common.metrics import auroc, match, normalize_answer
from ragteam.reader.training.calibrate import HeldReading, fit_confidence, precise_threshold
from ragteam.reader.training.data import held_out
from ragteam.reader.training.people import VALIDATION, file_group


def reading_of(question: dict, index) -> dict | None:  # noqa: ANN001
    """What the confidence reads of `read`'s answer to `question`, and how it stands."""
    from ragteam.reader.confidence import span_features
    from ragteam.reader.stage import _ruled, reading_for
    from ragteam.strategies.base import Context
    from ragteam.strategies.read import Read, _earlier
    from ragteam.trace import Trace

    strategy = Read()
    ctx = Context(model=None, index=index, trace=Trace())
    found, _ = strategy.gathered(question["question"], ctx)
    reader = ctx.readers.get("")
    rules = strategy.rules()
    reading, passages = reading_for(question["question"], found, ctx.trace, reader, rules)
    said = _ruled(question["question"], reading, passages, rules, _earlier(index))
    span = said if said is not None else reading.best
    if span is None:
        return None
    order = {p.id: n for n, p in enumerate(passages)}
    golds = [normalize_answer(a) for a in question["answers"]]
    held = any(g and g in normalize_answer(p.text) for g in golds for p in passages)
    return {
        "features": span_features(reading, span, order),
        "probability": reading.answer_score(span.text),
        "no_answer": reading.no_answer,
        "now": reader.confidence(reading, span, passages),
        "right": bool(golds) and bool(match(span.text, question["answers"])),
        "has_answer": held,
    }


def collect(args: argparse.Namespace) -> None:
    done = set()
    if args.out.exists():
        done = {json.loads(x)["id"] for x in args.out.read_text().splitlines() if x}
    with args.out.open("a", encoding="utf-8") as handle:
        for part, index, q in each_question(args.data, args.work):
            group = file_group(part, q)
            if q["id"] in done or not held_out(group, args.held):
                continue
            if q["file"] is not None and Path(q["file"]).name in VALIDATION:
                continue
            row = reading_of(q, index)
            if row is not None:
                handle.write(json.dumps({"id": q["id"], "file": group} | row) + "\n")
                handle.flush()


def fit(args: argparse.Namespace) -> None:
    rows = [json.loads(x) for x in args.readings.read_text().splitlines() if x]
    held = [
        HeldReading(
            r["features"], r["probability"], r["no_answer"], r["right"], r["has_answer"], r["file"]
        )
        for r in rows
    ]
    model, out_of_fold, record = fit_confidence(held)
    labels = [int(r["right"]) for r in rows]
    now = auroc([r["now"] for r in rows], labels)
    print(f"{len(rows)} answers, {sum(labels)} right; AUROC now {now:.3f}, refit {record}")
    scored = list(zip(out_of_fold, [r["right"] for r in rows], strict=True))
    threshold, precision, labelled = precise_threshold(scored, 0.80, 10)
    was = precise_threshold(list(zip([r["now"] for r in rows], labels, strict=True)), 0.80, 10)
    print(f"label now: {was[0]:.4f}, {was[2]} labelled, right {was[1]:.3f}")
    print(f"refit, out of fold: {threshold:.4f}, {labelled} labelled, right {precision:.3f}")
    if args.calibration is not None:
        data = json.loads(args.calibration.read_text(encoding="utf-8"))
        data["confidence"], data["span"] = model.to_json(), threshold
        data["confidence_fitted_on"] = (
            f"docqa-train's held training files ({len(rows)} answers of `read`): "
            f"bench/confidence_fit.py; {record}"
        )
        data["span_fitted_on"] = (
            f"the refit confidence's out-of-fold values on the same answers ({labelled} "
            f"labelled, right {precision:.3f}): bench/confidence_fit.py"
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
    b.add_argument("--calibration", type=Path, help="write the model and the threshold here")
    args = parser.parse_args()
    collect(args) if args.command == "collect" else fit(args)


if __name__ == "__main__":
    main()
