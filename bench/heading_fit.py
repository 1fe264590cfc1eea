"""Fit whether a question asks for a heading (`ragteam.reader.asks`) on docqa-train's training
files (never its validation files), with its cross-validation by file; `--grid` prints the
cross-validation for each penalty and threshold instead of writing.

    python bench/heading_fit.py --data ../shared/data/docqa-train \
        --out ragteam/data/heading-questions.json
    python bench/heading_fit.py --data ../shared/data/docqa-train --grid
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragteam.reader.training.asks import asked_rows, cross_validated, fit_heading_questions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="the docqa-train folder")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--grid", action="store_true")
    args = parser.parse_args()
    rows = asked_rows(args.data)
    if args.grid:
        for l2 in (1.0, 3.0, 10.0, 30.0):
            for threshold in (0.2, 0.3, 0.5, 0.7):
                checked = cross_validated(rows, l2, threshold)
                print(json.dumps({"l2": l2, "threshold": threshold, **checked}))
        return
    if args.out is None:
        parser.error("--out is needed unless --grid")
    model = fit_heading_questions(rows)
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text(json.dumps(model.to_json()) + "\n", encoding="utf-8")
    tmp.replace(args.out)
    print(f"wrote {args.out}: {len(model.vocab)} tokens; {json.dumps(model.fitted)}")


if __name__ == "__main__":
    main()
