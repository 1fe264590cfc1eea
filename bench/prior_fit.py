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

from pathlib import Path

from held_fit import main, read_as_read, write_fitted

from ragteam.common.metrics import match
from ragteam.reader.polar import is_polar
from ragteam.reader.training.prior import Spans, cross_validated, fit_prior, picked_right


def spans_of(question: dict, index, weights: str = "") -> dict:  # noqa: ANN001
    """The spans `read` reads for `question`: each one's probability, position, rightness."""
    reading, passages, _ = read_as_read(question["question"], index, weights)
    order = {p.id: n for n, p in enumerate(passages)}
    spans = sorted((s for s in reading.spans if s.kind == "span"), key=lambda s: -s.score)
    return {
        "scores": [s.score for s in spans],
        "positions": [order.get(s.passage_id, len(order)) for s in spans],
        "right": [bool(match(s.text, question["answers"])) for s in spans],
    }


def spans_if_asked(question: dict, index, weights: str = "") -> dict | None:  # noqa: ANN001
    """`spans_of` for an answerable question of a file that is not yes/no, else None."""
    if not question["answers"] or question["file"] is None or is_polar(question["question"]):
        return None
    return spans_of(question, index, weights)


def fit(rows: list[dict], calibration: Path | None) -> None:
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
    if calibration is not None:
        fitted_on = (
            f"docqa-train's held training files ({len(questions)} questions of `read`, not "
            f"yes/no): bench/prior_fit.py; first span right {with_prior} by it, {alone} by "
            "probability, cross-validated by file"
        )
        write_fitted(calibration, {"prior": prior.to_json(), "prior_fitted_on": fitted_on})


if __name__ == "__main__":
    main(__doc__, spans_if_asked, fit, "the prior")
