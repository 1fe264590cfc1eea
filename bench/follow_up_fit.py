"""Fit the follow-up model (`ragteam.followup`) on docqa-train's training chains (never its
dev chains: those over its validation files, bench/follow_up_answers.py's DEV).

    python bench/follow_up_fit.py --data ../shared/data/docqa-train --out ragteam/data/followup.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from follow_up_answers import DEV

from ragteam.followup.training.fit import fit_followups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="the docqa-train folder")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    chains = [json.loads(x) for x in (args.data / "conversations.jsonl").read_text().splitlines()]
    model = fit_followups([c for c in chains if c["id"] not in DEV])
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text(json.dumps(model.to_json(), indent=1) + "\n", encoding="utf-8")
    tmp.replace(args.out)
    print(f"wrote {args.out}: {json.dumps(model.fitted)}; carried at {model.carry_at:.2f}")


if __name__ == "__main__":
    main()
