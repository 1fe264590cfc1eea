"""Questions about a setting's default (`ragteam.reader.defaults`): the values stated, and the
one of the best span's entry."""

from __future__ import annotations

import pytest

from ragteam.locator import Locator
from ragteam.reader.defaults import (
    asks_default,
    default_answer,
    named_default,
    said_default,
    stated_defaults,
)
from ragteam.types import Passage, Span


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
        ("The default server when using instaweb is lighttpd.", ["lighttpd"]),
        ("to change the default epsilon limit (1e-5) to detect it", ["1e-5"]),
        ("The columns default to the rows, which defaults to 10.", ["10"]),
        ("The default behaviour of the command when the file is missing is", []),
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
    # (the reader shipped on 2026-12-08 reads the gap's default, \\fboxsep, by itself; the fill
    # colour's it reads as the whole entry)
    question = "What colour fills the space between the frame and the text by default?"
    asked = answer(question, index=index)
    assert asked.text == "none"
    off = answer(question, index=index, options={"default_values": False})
    assert off.text != "none"


def _entry(pid: str, heading: str, text: str) -> Passage:
    return Passage(pid, "", text, locator=Locator("ref.html", section=("Reference", heading)))


LISTED = (
    "Default is 96 MiB on all platforms.\n\ncore.bigFileThreshold\n\nThe size of files "
    'considered "big". The default is 512 MiB. Common unit suffixes are supported.'
)


@pytest.mark.parametrize(
    ("question", "passages", "expected"),
    [
        # the default stated after the entry's name, not the one before it (another entry's)
        (
            "What is the default core.bigFileThreshold?",
            [_entry("g", "Variables", LISTED)],
            "512 MiB",
        ),
        # the entry whose heading names it, though the reader ranked another first
        (
            "What's the default value of -dBlackThresholdL?",
            [
                _entry(
                    "c", "-dBlackThresholdC= float", "Set by BlackThresholdL. Default value is 3."
                ),
                _entry("l", "-dBlackThresholdL= float", "Sets the threshold. Default is 90."),
            ],
            "90",
        ),
        # no default stated: the value it is set to in code, not a longer name holding it
        (
            "What is the default \\heavyrulewidth?",
            [
                _entry(
                    "b", "9 The code", "5 \\newdimen\\heavyrulewidth\n15 \\heavyrulewidth=.08em\n16"
                )
            ],
            ".08em",
        ),
        # the next entry's default is not this one's
        (
            "What is the default opt.alpha?",
            [_entry("n", "Options", "opt.alpha\n\nTurns it on.\n\nopt.beta\n\nThe default is 5.")],
            None,
        ),
        ("What is the default of the gap?", [_entry("g", "Variables", LISTED)], None),  # no name
        ("What is core.bigFileThreshold?", [_entry("g", "Variables", LISTED)], None),  # no default
    ],
)
def test_the_default_of_the_entry_the_question_names_as_code(question, passages, expected):
    said = named_default(question, passages, {"l": 0.25})
    assert (said.text if said else None) == expected
    if said is not None:
        text = next(p.text for p in passages if p.id == said.passage_id)
        assert text[said.start : said.end] == said.text and said.text in said.sentence
        assert said.score == (0.25 if said.passage_id == "l" else 0.0)


def test_a_default_asked_of_an_entry_named_as_code_on_a_real_page(html_index):
    """Through the default strategy, over an HTML list of variables (each name a term, its
    description after it): the answer is the default its description states."""
    from ragteam import answer

    terms = {
        "core.packedGitLimit": "The most bytes mapped at once. Default is 256 MiB.",
        "core.bigFileThreshold": "The size of files considered big. The default is 512 MiB.",
        "core.compression": "The compression level. Defaults to 1.",
    }
    body = "".join(f"<dt>{t}</dt><dd><p>{d}</p></dd>" for t, d in terms.items())
    index = html_index("config.html", "Variables", f"<h1>Variables</h1><dl>{body}</dl>")
    asked = answer("What is the default core.bigFileThreshold?", index=index)
    assert asked.text == "512 MiB"


def test_a_default_asked_of_another_release_is_not_the_one_stated_without_it():
    text = "where \\cmidrulekern defaults to 0.5 em, but can be set in the preamble."
    passages = [_entry("k", "3 Use", text)]
    asked = "What did \\cmidrulekern default to in version 1.00?"
    assert named_default(asked, passages, {}) is None
    in_it = [_entry("k", "3 Use", text.replace("defaults", "in version 1.00 defaults"))]
    said = named_default(asked, in_it, {})
    assert said is not None and said.text == "0.5 em"


@pytest.mark.parametrize(
    "question, asks",
    [
        ("How many rows does the grid have if I don't specify it?", True),
        ("Which port is used when not specified?", True),
        ("What is used if unspecified?", True),
        ("What does -q do by default?", True),
        ("How many rows does the grid have?", False),
        ("Which option did you specify?", False),
    ],
)
def test_a_default_is_asked_for_in_other_words(question, asks):
    assert asks_default(question) is asks


GRID = (
    "Up to three parameters can be given: the number of rows, the number of columns and the "
    "norm. The plot takes them in order. The number of columns defaults to the number of rows, "
    "which defaults to 10."
)
FIT = (
    "The limit abs option imposes an absolute limit and defaults to zero. The limit option "
    "can be used to change the default epsilon limit (1e-5) to detect convergence."
)


def _reading(passages, words):
    """The reader's best span: `words` in the first passage."""
    text = passages[0].text
    at = text.index(words)
    return Span(passages[0].id, at, at + len(words), words, words, at, 0.2)


@pytest.mark.parametrize(
    "question, passages, best, expected",
    [
        # the best span states no default; the one stated with the question's words, a number
        ("How many rows does the grid have if I don't specify it?", [_entry("g", "Grid", GRID)],
         "number of rows", "10"),
        # the best span is another option's default: the one whose sentence says the question
        ("What is the default epsilon limit to detect convergence?", [_entry("f", "Fit", FIT)],
         "zero", "1e-5"),
        # the default asked for stands in a passage the reader ranked second
        ("What web server does instaweb use by default?",
         [_entry("b", "web.browser", "Specify a web browser that may be used."),
          _entry("i", "instaweb", "The default server when using instaweb is lighttpd.")],
         "web browser", "lighttpd"),
        # a statement the question rules out ("(not eps)") is not the one asked for
        ("What is the default size of postscript output (not eps)?",
         [_entry("g", "Postscript", "The default size for postscript output is 10 x 7 inches. "
                 "The default for eps output is 5 x 3.5 inches.")],
         "5 x 3.5 inches", "10 x 7 inches"),
        # no stated default says more of the question than the best span's own does: it stands
        ("What is the default limit abs?", [_entry("f", "Fit", FIT)], "zero", None),
        ("How many rows does the grid have?", [_entry("g", "Grid", GRID)], "number of rows", None),
    ],
)  # fmt: skip
def test_the_default_said_with_most_of_the_question_s_words(question, passages, best, expected):
    scores = {"g": 0.2, "f": 0.2, "b": 0.2, "i": 0.4}  # the reader's best in each passage
    said = said_default(question, passages, scores, _reading(passages, best))
    assert (said.text if said else None) == expected
    if said is not None:
        text = next(p.text for p in passages if p.id == said.passage_id)
        assert text[said.start : said.end] == said.text and said.text in said.sentence
        assert said.score == scores[said.passage_id]


def test_a_default_whose_value_stands_in_a_paragraph_of_its_own_is_its_entry_s():
    """HTML's `<code>` value converted into a paragraph of its own: the statement begins in
    the best span's paragraph, so it is that entry's default."""
    text = (
        "set errorcolor fgcolor,bgcolor\n\nUse this color combination for the status bar when "
        "an error message is displayed. The default value is\n\nbold,white,red\n\n. See\n\n"
        "set keycolor fgcolor,bgcolor\n\nUse this color combination. The default is black."
    )
    at = text.index("color combination")
    best = Span("p", at, at + 17, "color combination", "Use this ...", at, 0.5)
    said = default_answer("What colours does the status bar use by default?", text, best)
    assert said is not None and said.text == "bold,white,red" and said.score == 0.5
    assert said.sentence.startswith("The default value is")
