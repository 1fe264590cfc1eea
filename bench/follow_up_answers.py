"""Follow-ups measured on answers: docqa-train's dev chains (those over its validation files;
the model in `ragteam.followup` is fitted on the other chains), each later turn answered by
`read` as a person asked it alone, as the former rule made it stand alone (the earlier
question that began the chain and the latest answer appended, kept here as the baseline), as
the fitted model makes it stand alone, and as the person's own standalone rewrite (the
ceiling). Earlier turns are answered by the system itself, as in a real conversation.

    python bench/follow_up_answers.py --data ../shared/data/docqa-train --work /tmp/dqt/people

Each part's index is WORK/PART/ix (bench/docqa_train.py syncs them). Reported: right answers
per way (a gold answer's words in the answer), on the leaning turns and on the fresh ones
(`standalone`), with paired bootstrap CIs against the former rule."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from doc_answers import bootstrap
from docqa_dev import index_of

from ragteam import answer
from ragteam.common.metrics import match
from ragteam.followup import answer_only, standalone

DEV = (
    {f"conv-{n:03d}" for n in (8, 9, 26, 27, 31, 32, 33, 46, 47)}
    | {
        f"{part}-conv-{n:03d}"
        for part, first in (("science", 17), ("desktop", 22), ("specs", 18), ("servers", 20))
        for n in range(first, first + 4)
    }
    | {f"office2-conv-{n:03d}" for n in range(27, 31)}
)
LIMIT = 2000
_OPENS = re.compile(r"^\s*(and|but|also|so|then|what about|how about)\b", re.I)
_LEANS = re.compile(
    r"^\s*(and|but|also|so|then|what about|how about)\b"
    r"|\b(it|its|they|them|their|these|those|this|that|he|she|him|her|his|there)\b",
    re.I,
)


def former_rule(asked: str, earlier: list[tuple[str, str]]) -> str:
    """The rule before the fitted model (8f7c442's server/followup.py), the baseline."""
    asked_at = [n for n, (role, text) in enumerate(earlier) if role == "user" and text.strip()]
    if not (_LEANS.search(asked) and asked_at):
        return asked
    root = asked_at[-1]
    for n in reversed(asked_at):
        root = n
        if not _OPENS.search(earlier[n][1]):
            break
    said = [answer_only(t) for r, t in earlier[asked_at[-1] + 1 :] if r == "assistant"]
    follows = " ".join([" ".join(earlier[root][1].split()), *said[-1:]]).strip()
    return f"{' '.join(asked.split())} (following: {follows})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/dqt/people"))
    parser.add_argument("--out", type=Path, default=Path("/tmp/dqt/follow_up_answers.jsonl"))
    args = parser.parse_args()
    chains = [json.loads(x) for x in (args.data / "conversations.jsonl").read_text().splitlines()]
    rows = []
    for chain in [c for c in chains if c["id"] in DEV]:
        part = chain["file"].split("/")[0]
        index = index_of(args.data / part, args.work / part)
        earlier: list[tuple[str, str]] = []
        for k, turn in enumerate(chain["turns"]):
            golds = turn["answers"]
            if k:
                asked = {
                    "alone": turn["question"],
                    "rule": former_rule(turn["question"], earlier),
                    "model": standalone(turn["question"], earlier, LIMIT)[0],
                    "rewrite": turn["rewrite"],
                }
                said = {way: answer(q, index=index).text for way, q in asked.items()}
                row = {"chain": chain["id"], "turn": k, "fresh": turn.get("standalone", False)}
                row |= {f"{w}_q": q for w, q in asked.items()}
                row |= {w: match(t, golds) for w, t in said.items()}
                rows.append(row)
                reply = said["model"]
            else:
                reply = answer(turn["question"], index=index).text
            earlier += [("user", turn["question"]), ("assistant", reply)]
    args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for label, got in (
        ("leaning", [r for r in rows if not r["fresh"]]),
        ("fresh", [r for r in rows if r["fresh"]]),
    ):
        if got:
            counts = ", ".join(
                f"{w} {sum(r[w] for r in got):.0f}" for w in ("alone", "rule", "model", "rewrite")
            )
            print(f"{label} turns ({len(got)}): right {counts}")
    for way in ("alone", "model", "rewrite"):
        mean, low, high = bootstrap([r[way] - r["rule"] for r in rows])
        print(
            f"{way} - rule on all {len(rows)} follow-ups: {mean:+.3f} ({low:+.3f} to {high:+.3f})"
        )


if __name__ == "__main__":
    main()
