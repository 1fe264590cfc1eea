"""Follow-up questions: is the gold passage found when a follow-up is searched as it stands, as
a chat client pastes the conversation, or as ragteam makes it stand alone
(`ragteam.followup`)? docs/benchmarks.md §34.

    python bench/follow_ups.py --work /tmp/docqa [--turns 3]

Pairs come from the document QA benchmark (bench/doc_qa_build.py): two answerable questions
"What is the C1 of KEY?" and "What is the C2 of KEY?" about the same KEY, in both orders. The
first is the earlier turn, answered rightly as the chat endpoint writes a reply (the gold answer
with its [1] mark, then its source); the follow-up is "And what is its C2?". Each way of
searching is scored by whether the follow-up's gold locator is among the top 5; the full second
question, as the benchmark asks it, is the ceiling. `--turns 3`: chains of three questions about
one key (C1, then "And what is its C2?", then "And what about its C3?"), every ordering; the
third is scored, searched alone, with the whole conversation pasted, or made to stand alone
(whose subject must come from the first question through the second, which holds a pronoun
itself)."""

from __future__ import annotations

import argparse
import json
import re
from itertools import permutations
from pathlib import Path

from doc_answers import bootstrap
from doc_qa import at_gold

from ragteam.followup import standalone
from ragteam.retrieval import load_index

ASKED = re.compile(r"What is the (.+?) of (.+)\?$")


def _by_key(questions: list[dict]) -> list[list[tuple[dict, str]]]:
    """The answerable questions asked of each key, each with the column it asks for."""
    by_key: dict[str, list[tuple[dict, str]]] = {}
    for q in questions:
        found = ASKED.match(q["question"])
        if found and q["format"] != "none":
            by_key.setdefault(found.group(2), []).append((q, found.group(1)))
    return list(by_key.values())


def pairs(questions: list[dict]) -> list[tuple[dict, dict, str]]:
    """(earlier question, later question, the later one's column) for every ordered pair of
    answerable questions about the same key."""
    return [
        (first, second, column)
        for asked in _by_key(questions)
        for (first, _), (second, column) in permutations(asked, 2)
    ]


def chains(questions: list[dict]) -> list[tuple[dict, dict, dict, str, str]]:
    """(first, second, third question, the second's and the third's column) for every ordered
    triple of answerable questions about the same key."""
    return [
        (a, b, c, b_column, c_column)
        for asked in _by_key(questions)
        for (a, _), (b, b_column), (c, c_column) in permutations(asked, 3)
    ]


def _reply(question: dict) -> str:
    where = question["gold"][0]
    place = where["source"] + (f" p. {where['page']}" if where["page"] else "")
    return f"{question['answer']} [1]\n\nSources: [1] {place}"


def chain_searches(
    first: dict, second: dict, third: dict, second_column: str, third_column: str
) -> dict[str, str]:
    follow = f"And what is its {second_column}?"
    last = f"And what about its {third_column}?"
    turns = [("user", first["question"]), ("assistant", _reply(first))]
    turns += [("user", follow), ("assistant", _reply(second))]
    question, _ = standalone(last, turns, 4000)
    return {
        "as it stands": last,
        "pasted": "\n".join(text for _, text in turns) + "\n" + last,
        "made to stand alone": question,
        "the full question (ceiling)": third["question"],
    }


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
    parser.add_argument("--turns", type=int, choices=(2, 3), default=2)
    args = parser.parse_args()
    questions = [json.loads(x) for x in (args.work / "questions.jsonl").read_text().splitlines()]
    index = load_index(args.work / "ix")
    if args.turns == 2:
        asked = [(searches(a, b, col), b) for a, b, col in pairs(questions)]
    else:
        asked = [(chain_searches(*chain), chain[2]) for chain in chains(questions)]
    found: dict[str, list[float]] = {}
    for ways, scored in asked:
        for way, query in ways.items():
            hits = index.retrieve(query, k=5)
            found.setdefault(way, []).append(
                float(any(at_gold(h.locator, scored["gold"]) for h in hits))
            )
    n = len(next(iter(found.values())))
    print(f"{n} follow-ups of {args.turns} turns ({index.retriever} retrieval, top 5)")
    for way, hits in found.items():
        print(f"  {way:30} gold locator @5 {sum(hits) / n:.3f}")
    for other in ("pasted", "as it stands"):
        diffs = [a - b for a, b in zip(found["made to stand alone"], found[other], strict=True)]
        mean, low, high = bootstrap(diffs)
        print(f"  stand alone - {other}: {mean:+.3f} ({low:+.3f} to {high:+.3f})")


if __name__ == "__main__":
    main()
