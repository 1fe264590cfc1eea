"""Refit the span reader's answerability threshold (`Calibration.abstain`) on questions people
wrote over manuals: the manuals set (`bench/manuals_build.py`), never docqa-dev (the yardstick
is measured, not fitted on).

    python bench/manuals_build.py --work /tmp/manuals
    python bench/abstain_fit.py --data /tmp/manuals --work /tmp/manuals/runs [--write]

`ragteam train reader` fits the threshold on held training groups: the "no answer"
probability at which at most a tenth of their answerable questions are refused. On questions
people wrote that threshold refuses most of the answerable (docs/benchmarks.md §60-61): their
"no answer" probabilities sit higher. The same rule is applied here to the final reading of
each answerable question of DATA (the default `read`, its gate on names no passage mentions
on: a question it stops is refused whatever the threshold, and counts against the tenth).
Prints the declined and refused shares by threshold; `--write` puts the fitted threshold in
the shipped calibration file (or WEIGHTS's) with what it was fitted on."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from docqa_dev import index_of

from ragteam import answer
from ragteam.reader.read import calibration_path, default_weights

MAX_REFUSED = 0.10  # as `ragteam.reader.training.calibrate`


def final_no_answer(result) -> float:  # noqa: ANN001
    """The answerability head's "no answer" over every passage the answer was read from (the
    last reading; the first reads only the first search's passages)."""
    reads = [s for s in result.trace.steps if s.kind == "read"]
    return float(reads[-1].output["no_answer"]) if reads else 1.0


def readings(data: Path, work: Path) -> list[dict]:
    index = index_of(data, work)
    rows = []
    for line in (data / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        result = answer(q["question"], index=index)
        rows.append(
            {
                "id": q["id"],
                "answerable": bool(q["answers"]),
                "unmentioned": list(result.unmentioned),
                "no_answer": final_no_answer(result),
            }
        )
    return rows


def fitted(rows: list[dict], max_refused: float = MAX_REFUSED) -> float:
    """The lowest threshold that refuses at most `max_refused` of the answerable rows (those
    the gate stops are refused at any threshold)."""
    answerable = [r for r in rows if r["answerable"]]
    allowed = int(max_refused * len(answerable)) - sum(bool(r["unmentioned"]) for r in answerable)
    free = sorted(r["no_answer"] for r in answerable if not r["unmentioned"])
    if allowed < 0 or not free:
        return 1.0
    # refusing exactly the `allowed` highest: the threshold just above the next one down
    return free[len(free) - 1 - allowed] + 1e-6 if allowed < len(free) else 0.0


def shares(rows: list[dict], threshold: float) -> tuple[float, float]:
    """(unanswerable declined, answerable refused) at `threshold`, by the head and the gate."""

    def stopped(r: dict) -> bool:
        return bool(r["unmentioned"]) or r["no_answer"] >= threshold

    def share(group: list[dict]) -> float:
        return sum(map(stopped, group)) / len(group) if group else float("nan")

    return (
        share([r for r in rows if not r["answerable"]]),
        share([r for r in rows if r["answerable"]]),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a manuals-set folder")
    parser.add_argument("--work", type=Path, required=True, help="where its index is kept")
    parser.add_argument("--weights", type=Path, default=None, help="default: the shipped reader")
    parser.add_argument("--write", action="store_true", help="write the fitted threshold")
    args = parser.parse_args()
    if "docqa-dev" in str(args.data.resolve()):
        raise SystemExit("docqa-dev is the yardstick: fit on the manuals set, measure there")
    rows = readings(args.data, args.work)
    weights = args.weights or default_weights()
    record = json.loads(calibration_path(weights).read_text(encoding="utf-8"))
    chosen = fitted(rows)
    print("| threshold | unanswerable declined | answerable refused |\n|---|---|---|")
    for t in sorted({record["abstain"], 0.15, 0.2, 0.25, 0.3, 0.4, chosen}):
        declined, refused = shares(rows, t)
        mark = " (fitted)" if t == chosen else " (shipped)" if t == record["abstain"] else ""
        print(f"| {t:.4f}{mark} | {declined:.2f} | {refused:.2f} |")
    if args.write:
        declined, refused = shares(rows, chosen)
        record["fitted_on"]["abstain_refit"] = {
            "questions": f"{args.data.name}/questions.jsonl",
            "answerable": sum(r["answerable"] for r in rows),
            "unanswerable": sum(not r["answerable"] for r in rows),
            "trained_threshold": record["abstain"],
            "unanswerable_declined": round(declined, 4),
            "answerable_refused": round(refused, 4),
        }
        record["abstain"] = chosen
        path = calibration_path(weights)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        tmp.replace(path)
        print(f"wrote abstain {chosen:.4f} to {path}")


if __name__ == "__main__":
    main()
