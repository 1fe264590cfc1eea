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

from pathlib import Path

from held_fit import main, read_as_read, write_fitted

from ragteam.common.metrics import auroc, match, normalize_answer
from ragteam.reader.training.calibrate import HeldReading, fit_confidence, precise_threshold


def reading_of(question: dict, index, weights: str = "") -> dict | None:  # noqa: ANN001
    """What the confidence reads of `read`'s answer to `question`, and how it stands."""
    from ragteam.reader.confidence import span_features
    from ragteam.reader.read import load_reader
    from ragteam.reader.stage import _ruled
    from ragteam.strategies.read import _earlier

    reading, passages, rules = read_as_read(question["question"], index, weights)
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
        "now": load_reader(Path(weights) if weights else None).confidence(reading, span, passages),
        "right": bool(golds) and bool(match(span.text, question["answers"])),
        "has_answer": held,
    }


def fit(rows: list[dict], calibration: Path | None) -> None:
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
    if calibration is not None:
        confidence_on = (
            f"docqa-train's held training files ({len(rows)} answers of `read`): "
            f"bench/confidence_fit.py; {record}"
        )
        span_on = (
            f"the refit confidence's out-of-fold values on the same answers ({labelled} "
            f"labelled, right {precision:.3f}): bench/confidence_fit.py"
        )
        fitted = {"confidence": model.to_json(), "span": threshold}
        write_fitted(
            calibration, fitted | {"confidence_fitted_on": confidence_on, "span_fitted_on": span_on}
        )


if __name__ == "__main__":
    main(__doc__, reading_of, fit, "the model and the threshold")
