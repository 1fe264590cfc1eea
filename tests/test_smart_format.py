"""SMART trajectory text: parse the authors' examples, render the canonical form, round-trip."""

import json
from pathlib import Path

import pytest

from ragteam.smart.format import (
    Judgement,
    Trajectory,
    parse,
    render_prompt,
    render_trajectory,
)

DATA = Path(__file__).resolve().parent / "data" / "smart"


def examples(kind):
    return json.loads((DATA / f"{kind}_trajectory_examples.json").read_text())


def whole(x):
    return x["instruction"] + x.get("input", "") + x["output"]


@pytest.mark.parametrize("example", examples("long"), ids=lambda x: x["id"])
def test_long_examples_round_trip(example):
    t = parse(example["output"])
    assert t.intents and len(t.passages) == 3 and len(t.judgements) == 3 and t.answer
    canonical = render_trajectory(t)
    assert parse(canonical) == t
    assert render_trajectory(parse(canonical)) == canonical
    for j in t.judgements:
        if j.relevant:
            assert j.fact and j.fact in t.passages[j.index - 1][1]  # facts are verbatim
    assert set(t.citations) == {j.index for j in t.judgements if j.relevant}


def test_what_the_first_example_says():
    t = parse(examples("long")[0]["output"])
    assert t.intents == ["Baseball player who hit a home run for their 3000th hit"]
    assert [title for title, _ in t.passages] == [
        "Alex Rodriguez",
        "2010 New York Yankees season",
        "Alex Rodriguez",
    ]
    assert [j.relevant for j in t.judgements] == [False, True, True]
    assert t.judgements[2].fact.startswith("He hit it against the Tigers' Justin Verlander")
    assert (t.answer, t.citations) == ("Alex Rodriguez", [2, 3])
    # canonical form = the original without the space that opens each fact line
    assert render_trajectory(t) == examples("long")[0]["output"].replace("\n ", "\n")


def test_variants_in_the_released_examples_are_accepted():
    long = {x["id"]: parse(x["output"]) for x in examples("long")}
    assert long["long_example_2"].intents == [  # intents split by a newline
        "Time and shadow positioning",
        "How to determine the time of day based on the position of a person's shadow",
    ]
    assert long["long_example_2"].answer == "B: 12pm"
    assert [j.relevant for j in long["long_example_3"].judgements] == [False] * 3  # no colon
    assert long["long_example_3"].citations == [] and "Conclusion" in long["long_example_3"].answer
    assert "[Cite]" not in render_trajectory(long["long_example_3"])
    short = {x["id"]: parse(whole(x)) for x in examples("short")}
    assert short["short_example_1"].passages[0][0] == "LeBron James"  # <|retrieval|>
    assert short["short_example_2"].answer == "false" and short["short_example_2"].citations == [1]
    assert short["short_example_3"].citations == []  # an empty [Cite]: line
    assert short["short_example_4"].intents == ["Other schools attended by Mihail Kogălniceanu"]


def test_render_canonical_text_exactly():
    t = Trajectory(
        ["a b", "c"],
        [("T1", "x y"), ("T2", "z")],
        [Judgement(1, "T1", True, "x y"), Judgement(2, "", False)],
        "ans",
        [1],
    )
    assert render_trajectory(t) == (
        "<|Reconstructor|>:\nSearch(a b; c)</eor>\n\n"
        "<retrieval>[1] T1\nx y\n[2] T2\nz</retrieval>\n\n"
        "<|Locator|>:\n[Relevant]: [1] T1\nx y\n"
        "[Irrelevant]: [2] Lacking Supporting Facts</eol>\n\n"
        "<|Generator|>:\nans\n[Cite]: [1]</eog>"
    )
    assert render_prompt("Q?") == "<|Instruction|>:\nQ?</eoi>\n\n"
    assert render_prompt("Pick.", "A or B") == (
        "<|Instruction|>:\nPick.\n\n<|Input|>:\nA or B</eoi>\n\n"
    )
