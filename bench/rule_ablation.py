"""Which of `read`'s rules earn their place on questions people wrote (issue 86 item 3: "a rule
stays only if it helps"): each rule turned off alone, on docqa-train's training files (never
its validation files), paired against all rules on.

    python bench/rule_ablation.py run --data ../shared/data/docqa-train --work /tmp/dqt/people \\
        --out /tmp/dqt/ablation.jsonl
    python bench/rule_ablation.py report --out /tmp/dqt/ablation.jsonl

`run` searches each answerable training question once as `read` does (both hops) and answers
it once per variant with one reader, whose network outputs are kept between the variants (the
same passages are not read twice), a row per question with each variant's answer and whether
a gold answer's words stand whole in it (resumable). `report` prints each variant's right
count against all rules on, with a paired bootstrap CI, over all training files and over the
quarter the shipped reader never trained on (held by file hash). `--validation` answers the
validation files' questions instead (to measure what was chosen on the training files; their
"held files" row is empty)."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from doc_answers import bootstrap
from docqa_train import each_question

from ragteam.common.metrics import match
from ragteam.reader.training.data import held_out
from ragteam.reader.training.people import VALIDATION, file_group

SWITCHES = (
    "key_lines",
    "heading_answers",
    "table_columns",
    "code_tokens",
    "default_values",
    "list_answers",
)


def variants() -> dict[str, dict[str, bool]]:
    """All rules as shipped, each switch off alone, no rule at all, and echoes skipped."""
    out: dict[str, dict[str, bool]] = {"all": {}}
    out |= {f"no {s}": {s: False} for s in SWITCHES}
    out["no rule"] = dict.fromkeys(SWITCHES, False)
    out["skip echoes"] = {"skip_echoes": True}
    return out


def answered(question: dict, index) -> dict[str, str]:  # noqa: ANN001
    """Each variant's answer to `question`, searched once, read by one reader."""
    from ragteam.reader.stage import answer_by_reading
    from ragteam.strategies.base import Context
    from ragteam.strategies.read import Read, _earlier
    from ragteam.trace import Trace

    strategy = Read()
    ctx = Context(model=None, index=index, trace=Trace())
    found, names = strategy.gathered(question["question"], ctx)
    reader = ctx.readers.get("")
    out = {}
    for name, changed in variants().items():
        rules = dataclasses.replace(strategy.rules(), **changed)
        said = answer_by_reading(
            question["question"], found, Trace(), "read", reader, rules, names, _earlier(index)
        )
        out[name] = said.text if said is not None else ""
    return out


def run(args: argparse.Namespace) -> None:
    done = set()
    if args.out.exists():
        done = {json.loads(x)["id"] for x in args.out.read_text().splitlines() if x}
    with args.out.open("a", encoding="utf-8") as handle:
        for part, index, q in each_question(args.data, args.work):
            if not q["answers"] or q["id"] in done:
                continue
            if (Path(q["file"]).name in VALIDATION) != args.validation:
                continue
            said = answered(q, index)
            right = {k: match(v, q["answers"]) for k, v in said.items()}
            row = {"id": q["id"], "kind": q["kind"], "group": file_group(part, q), "answers": said}
            handle.write(json.dumps(row | {"right": right}) + "\n")
            handle.flush()


def report(args: argparse.Namespace) -> None:
    rows = [json.loads(x) for x in args.out.read_text().splitlines() if x]
    sets = {
        "these questions": rows,
        "held files": [r for r in rows if held_out(r["group"], args.held)],
    }
    print("| variant | set | n | right | changed | paired with all rules |")
    print("|---|---|---|---|---|---|")
    for name in variants():
        for label, chosen in sets.items():
            base = [r["right"]["all"] for r in chosen]
            mine = [r["right"][name] for r in chosen]
            changed = sum(r["answers"][name] != r["answers"]["all"] for r in chosen)
            mean, low, high = bootstrap([a - b for a, b in zip(mine, base, strict=True)])
            print(
                f"| {name} | {label} | {len(chosen)} | {sum(mine):.0f} | {changed} | "
                f"{mean:+.3f} ({low:+.3f} to {high:+.3f}) |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("run")
    a.add_argument("--data", type=Path, required=True, help="the docqa-train folder")
    a.add_argument("--work", type=Path, default=Path("/tmp/dqt/people"))
    a.add_argument("--out", type=Path, required=True)
    a.add_argument(
        "--validation", action="store_true", help="the validation files' questions (measured only)"
    )
    b = sub.add_parser("report")
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--held", type=float, default=0.25, help="train reader's --people-held")
    args = parser.parse_args()
    run(args) if args.command == "run" else report(args)


if __name__ == "__main__":
    main()
