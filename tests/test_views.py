"""Views of a reply being written: the answer so far only grows, and on the whole reply it
is what the strategy makes of it."""

from __future__ import annotations

from itertools import pairwise

import pytest

from ragteam.agents.views import after, before, clean_answer, json_field, text_answer
from ragteam.trace import Trace, Writing


def prefixes(text: str) -> list[str]:
    return [text[:n] for n in range(1, len(text) + 1)]


def grows(view, text: str) -> list[str]:
    shown = [view(p) for p in prefixes(text)]
    for earlier, later in pairwise(shown):
        assert later.startswith(earlier), (earlier, later)
    return shown


@pytest.mark.parametrize(
    "reply",
    [
        "Answer: Hevik.",
        "The answer is: 1744\nQuestion: next",
        "Theodore Roosevelt",
        "  'Sarnby'.",
        "The Hevik sea wall protects the harbour.\n\nMore text",
        "final answer - Emrik Tollan",
    ],
)
def test_the_text_view_grows_into_the_clean_answer(reply):
    shown = grows(text_answer, reply)
    assert clean_answer(reply).startswith(shown[-1])
    assert shown[-1] == clean_answer(reply) or reply.endswith("'.")


def test_an_answer_prefix_is_held_back_while_it_is_written():
    assert text_answer("Answ") == "" and text_answer("The answer is") == ""
    assert text_answer("Answer: Hev") == "Hev"
    assert text_answer("The Hevik") == "The Hevik"  # not a prefix once it says more


def test_the_json_view_reads_a_string_field_as_it_is_written():
    reply = '{"output": "steps", "answer": "Caf\\u00e9 \\"Zed\\" 7", "score": 3}'
    shown = grows(json_field("answer"), reply)
    assert shown[-1] == 'Café "Zed" 7'
    assert json_field("answer")('{"output": "x", "answ') == ""
    assert json_field("answer")('{"answer": "a\\u00') == "a"  # half an escape is held


def test_marker_views():
    assert grows(after("so the answer is"), "Hevik is on Sarnby. So the answer is: Hevik.")[-1] == (
        "Hevik"
    )
    assert after("so the answer is")("Emrik was born in 1744.") == ""
    shown = grows(before("\n[Cite]"), "Hevik\n[Cite]: [1]")
    assert shown[-1] == "Hevik" and before("\n[Cite]")("Hevik\n[Ci") == "Hevik"


def test_the_trace_numbers_each_call_and_applies_the_view():
    seen: list[Writing] = []
    trace = Trace(on_writing=seen.append)
    first = trace.writer("answerer", text_answer)
    second = trace.writer("planner")
    assert first is not None and second is not None
    first("Answer: Hev", 3)
    second('{"steps"', 2)
    assert seen == [
        Writing("answerer", 1, 3, "Answer: Hev", "Hev"),
        Writing("planner", 2, 2, '{"steps"', None),
    ]
    assert Trace().writer("answerer") is None  # nothing listens: calls run unwatched
