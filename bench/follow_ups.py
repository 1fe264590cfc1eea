"""Follow-up questions: is the gold passage found when a follow-up is searched as it stands, as
a chat client pastes the conversation, or as ragteam makes it stand alone
(`ragteam.server.followup`)? docs/benchmarks.md §34.

    python bench/follow_ups.py --work /tmp/docqa

Pairs come from the document QA benchmark (bench/doc_qa_build.py): two answerable questions
"What is the C1 of KEY?" and "What is the C2 of KEY?" about the same KEY, in both orders. The
first is the earlier turn, answered rightly as the chat endpoint writes a reply (the gold answer
with its [1] mark, then its source); the follow-up is "And what is its C2?". Each way of
searching is scored by whether the follow-up's gold locator is among the top 5; the full second
question, as the benchmark asks it, is the ceiling."""

from __future__ import annotations

import argparse
import json
import re
from itertools import permutations
from pathlib import Path

from doc_answers import bootstrap
from doc_qa import at_gold

from ragteam.retrieval import load_index
from ragteam.server.followup import standalone

ASKED = re.compile(r"What is the (.+?) of (.+)\?$")


def pairs(questions: list[dict]) -> list[tuple[dict, dict, str]]:
    """(earlier question, later question, the later one's column) for every ordered pair of
    answerable questions about the same key."""
    by_key: dict[str, list[tuple[dict, str]]] = {}
    for q in questions:
        found = ASKED.match(q["question"])
        if found and q["format"] != "none":
            by_key.setdefault(found.group(2), []).append((q, found.group(1)))
    return [
        (first, second, column)
        for asked in by_key.values()
        for (first, _), (second, column) in permutations(asked, 2)
    ]


def searches(first: dict, second: dict, column: str) -> dict[str, str]:
    where = first["gold"][0]
    place = where["source"] + (f" p. {where['page']}" if where["page"] else "")
    reply = f"{first['answer']} [1]\n\nSources: [1] {place}"
    follow = f"And what is its {column}?"
    question, _ = standalone(follow, [("user", first["question"]), ("assistant", reply)], 4000)
    return {
        "as it stands": follow,
        "pasted": f"{first['question']}\n{reply}\n{follow}",
        "made to stand alone": question,
        "the full question (ceiling)": second["question"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/docqa"))
    args = parser.parse_args()
    questions = [json.loads(x) for x in (args.work / "questions.jsonl").read_text().splitlines()]
    index = load_index(args.work / "ix")
    found: dict[str, list[float]] = {}
    for first, second, column in pairs(questions):
        for way, query in searches(first, second, column).items():
            hits = index.retrieve(query, k=5)
            found.setdefault(way, []).append(
                float(any(at_gold(h.locator, second["gold"]) for h in hits))
            )
    n = len(next(iter(found.values())))
    print(f"{n} follow-ups ({index.retriever} retrieval, top 5)")
    for way, hits in found.items():
        print(f"  {way:30} gold locator @5 {sum(hits) / n:.3f}")
    for other in ("pasted", "as it stands"):
        diffs = [a - b for a, b in zip(found["made to stand alone"], found[other], strict=True)]
        mean, low, high = bootstrap(diffs)
        print(f"  stand alone - {other}: {mean:+.3f} ({low:+.3f} to {high:+.3f})")


if __name__ == "__main__":
    main()
