"""Questions about a setting's default (`ragteam.reader.defaults`): the values stated, and the
one of the best span's entry."""

from __future__ import annotations

import pytest

from ragteam.reader.defaults import asks_default, default_answer, stated_defaults
from ragteam.types import Span


@pytest.mark.parametrize(
    "text, values",
    [
        ("frame (none|single) : type of frame (Default: none). Then", ["none"]),
        ("net_inc\nType: number\nDefault: 10\n\nOperations that", ["10"]),
        ("HISTFILE names the file. The default value is ~/.bash_history.", ["~/.bash_history"]),
        ("The timeout defaults to 30 seconds.", ["30 seconds"]),
        (
            "the new default is on_setattr=[a.convert, a.validate].",
            ["on_setattr=[a.convert, a.validate]"],
        ),
        ("It is off by default, and nothing says what it is.", []),
    ],
)
def test_the_values_a_default_is_stated_as(text, values):
    assert [text[a:b] for a, b in stated_defaults(text)] == values


ENTRIES = (
    "framerule (dimension) : width of the rule of the frame (Default: 0.4pt).\n"
    "framesep (dimension) : width of the gap between the frame and the text "
    "(Default: \\fboxsep).\n\n"
    "rulecolor (color command) : color of the frame rule (Default: black)."
)


def _span(words: str, score: float = 0.3) -> Span:
    at = ENTRIES.index(words)
    return Span("p", at, at + len(words), words, words, at, score)


def test_the_default_of_the_best_span_s_entry_answers_with_its_score():
    question = "What is the default gap between a frame and its text?"
    assert asks_default(question)
    said = default_answer(question, ENTRIES, _span("width of the gap"))
    assert said is not None and said.text == "\\fboxsep" and said.score == 0.3
    assert ENTRIES[said.start : said.end] == "\\fboxsep"
    # in a paragraph with no default after the span, the one just before it
    said = default_answer("What color is the frame rule by default?", ENTRIES, _span("black"))
    assert said is None  # the reader's span is that value already
    ahead = default_answer(question, ENTRIES, _span("color of the frame rule"))
    assert ahead is not None and ahead.text == "black"


def test_a_question_about_no_default_or_a_span_in_the_value_is_left_alone():
    assert (
        default_answer("What is the gap between a frame and its text?", ENTRIES, _span("width"))
        is None
    )
    assert default_answer("What is the default gap?", ENTRIES, _span("\\fboxsep")) is None


def test_a_default_asked_of_a_real_reference_page_is_the_value_its_entry_states(html_index):
    """Through the default strategy, over an HTML page of option entries: the reader finds the
    entry's description; the answer is the default it states, which the reader alone does not
    give."""
    from ragteam import answer

    entries = [
        "framerule (dimension) : width of the rule of the frame (Default: 0.4pt).",
        "framesep (dimension) : width of the gap between the frame and the text "
        "(Default: \\fboxsep).",
        "rulecolor (color command) : color of the frame rule (Default: black).",
        "fillcolor (color command) : color used to fill the space between the frame and the "
        "text (Default: none).",
    ]
    body = "".join(f"<p>{e}</p>" for e in entries)
    index = html_index("frames.html", "Frames", f"<h1>Frames around verbatim text</h1>{body}")
    question = "What is the default gap between a frame and its text?"
    asked = answer(question, index=index)
    assert asked.text == "\\fboxsep"
    off = answer(question, index=index, options={"default_values": False})
    assert off.text != "\\fboxsep"
