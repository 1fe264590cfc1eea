"""The label's threshold refit on questions people wrote that the shipped reader never trained on
(issue 86 item 5): docqa-train's held training files, the quarter of its training files that
`ragteam train reader --people` held out (`--people-held 0.25`, by the hash of each file, as
bench/ranker_fit.py selects them), never the validation files and never docqa-dev.

    python bench/docqa_train.py run --data ../shared/data/docqa-train --work W \\
        --tag trainmix --split train
    python bench/label_fit.py --work W --tag trainmix --precision 0.80 \\
        --calibration ragteam/data/reader-minilm.calibration.json

Each row is an answer `read` gave, with its confidence (the number the label compares with the
calibration's `span`) and whether it is right; the unanswerable held questions count as wrong
answers. The threshold is the lowest confidence at which the held answers at or above it are
right at least `--precision` of the time, with at least `--least` of them labelled
(`ragteam.reader.training.calibrate.precise_threshold`), cross-checked by file: each file's
answers judged by a threshold fitted on the other files'. `--calibration` writes it there.

`--abstain` refits `--abstain`'s threshold (the calibration's `abstain`) on the same held
answers by the rule `ragteam train reader` fits it with: the lowest "no answer" probability at
which at most MAX_REFUSED of the answerable are withheld. An answer is withheld when it is not
labelled supported and the reader found nothing: a name no passage mentions (the gate), or
"no answer" at or above the threshold."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragteam.reader.training.calibrate import precise_threshold
from ragteam.reader.training.data import held_out
from ragteam.reader.training.people import file_group


def held_rows(work: Path, tag: str, share: float, data: Path) -> list[dict]:
    """The run's rows over the held training files (and the held unanswerable questions)."""
    rows = []
    for path in sorted(work.glob(f"*/answers_{tag}.jsonl")):
        part = path.parent.name
        questions = {
            q["id"]: q
            for q in map(json.loads, (data / part / "questions.jsonl").read_text().splitlines())
        }
        for row in map(json.loads, path.read_text().splitlines()):
            q = questions[row["id"]]
            group = file_group(part, q)  # an unanswerable question is held alone
            if held_out(group, share):
                rows.append(row | {"group": group})
    return rows


MAX_REFUSED = 0.10  # as `ragteam.reader.training.calibrate`


def withheld(row: dict, threshold: float) -> bool:
    """Whether `--abstain` withholds the answer of `row` at `threshold`."""
    found = not row["unmentioned"] and row["no_answer"] < threshold
    return row["label"] != "supported" and not found


def abstain_threshold(rows: list[dict], answerable: set[str]) -> tuple[float, float, float]:
    """The lowest threshold withholding at most MAX_REFUSED of the answerable rows, with the
    shares of answerable refused and unanswerable declined there."""
    asked = [r for r in rows if r["id"] in answerable]
    unanswerable = [r for r in rows if r["id"] not in answerable]
    for t in sorted({r["no_answer"] for r in rows} | {1.0}):
        refused = sum(withheld(r, t) for r in asked) / max(1, len(asked))
        if refused <= MAX_REFUSED:
            declined = sum(withheld(r, t) for r in unanswerable) / max(1, len(unanswerable))
            return t, refused, declined
    return 1.0, 0.0, 0.0


def scored(rows: list[dict]) -> list[tuple[float, bool]]:
    return [(r["confidence"] or 0.0, bool(r["match"])) for r in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--tag", required=True)
    parser.add_argument("--data", type=Path, default=Path("../shared/data/docqa-train"))
    parser.add_argument("--held", type=float, default=0.25, help="train reader's --people-held")
    parser.add_argument("--precision", type=float, default=0.85)
    parser.add_argument("--least", type=int, default=10)
    parser.add_argument("--calibration", type=Path, help="write the threshold into this file")
    parser.add_argument("--abstain", action="store_true", help="refit --abstain's threshold too")
    args = parser.parse_args()
    rows = held_rows(args.work, args.tag, args.held, args.data)
    groups = sorted({r["group"] for r in rows})
    threshold, precision, labelled = precise_threshold(scored(rows), args.precision, args.least)
    print(
        f"{len(rows)} held answers over {len(groups)} files, {sum(r['match'] for r in rows):.0f} "
        f"right: threshold {threshold:.4f}, {labelled} labelled, right {precision:.3f}"
    )
    shown = right = 0  # each file judged by the threshold fitted without it
    for g in groups:
        fitted = precise_threshold(
            scored([r for r in rows if r["group"] != g]), args.precision, args.least
        )[0]
        mine = [r for r in rows if r["group"] == g and (r["confidence"] or 0.0) >= fitted]
        shown += len(mine)
        right += sum(bool(r["match"]) for r in mine)
    print(f"by file, out of fold: {shown} labelled, right {right / max(1, shown):.3f}")
    answerable = {r["id"] for r in rows if r["kind"] != "unanswerable"}
    t, refused, declined = abstain_threshold(rows, answerable)
    abstained = (
        t,
        f"docqa-train's held training files ({len(answerable)} answerable, refused {refused:.3f}; "
        f"{len(rows) - len(answerable)} unanswerable, declined {declined:.3f}): "
        "bench/label_fit.py --abstain",
    )
    print(f"--abstain: threshold {t:.4f}, refuses {refused:.3f}, declines {declined:.3f}")
    if args.calibration is not None:
        data = json.loads(args.calibration.read_text(encoding="utf-8"))
        was, data["span"] = data["span"], threshold
        data["span_fitted_on"] = (
            f"docqa-train's held training files ({len(rows)} answers, {labelled} labelled, "
            f"right {precision:.3f}): bench/label_fit.py --precision {args.precision}"
        )
        if args.abstain:
            data["abstain"], data["abstain_fitted_on"] = abstained
        args.calibration.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"the label's threshold {was:.4f} -> {threshold:.4f} in {args.calibration}")


if __name__ == "__main__":
    main()
