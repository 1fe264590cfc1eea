"""Questions whose answer is a code token (`ragteam.reader.tokens`): what asks for one, what is
one, and which of the reader's spans gives it."""

from __future__ import annotations

import pytest

from ragteam.reader.spans import Reading, Span
from ragteam.reader.tokens import asks_code, code_answer, code_tokens


@pytest.mark.parametrize(
    "question, asks",
    [
        ("Which ffmpeg option stops it from reading console input?", True),
        ("What dh_strip switch converts a legacy -dbg package?", True),
        ("What should the microtype configuration file for cmr be called?", True),
        ("What line do I put in my preamble to load microtype?", True),
        ("Which codec should I use instead of jpeg?", False),
        ("Who maintains the package?", False),
        ("What does the pager do with quoted text?", False),
    ],
)
def test_what_asks_for_a_code_token(question, asks):
    assert asks_code(question) is asks


def test_code_tokens_are_options_macros_paths_and_dotted_names_not_prose():
    text = (
        "Use -nostdin (or \\usepackage{microtype}), see /usr/share/doc/x/README.gz and "
        "typing.MutableMapping, e.g. in mt-cmr.cfg; a well-known fact."
    )
    assert [t for _, t in code_tokens(text)] == [
        "-nostdin",
        "\\usepackage{microtype}",
        "/usr/share/doc/x/README.gz",
        "typing.MutableMapping",
        "mt-cmr.cfg",
    ]
    at, token = code_tokens(text)[0]
    assert text[at : at + len(token)] == token


def _span(text: str, passage: str, score: float) -> Span:
    start = passage.index(text)
    return Span("p", start, start + len(text), text, passage, 0, score)


PASSAGE = (
    "To stop ffmpeg from reading console input in the background, which can suspend it, "
    "run it with -nostdin; typing.Dict is replaced by typing.MutableMapping."
)


def test_a_prose_answer_gives_way_to_the_first_code_token_of_the_next_spans():
    reading = Reading(
        (
            _span("suspend it", PASSAGE, 0.4),
            _span("ffmpeg", PASSAGE, 0.2),
            _span("run it with -nostdin", PASSAGE, 0.1),
        ),
        0.1,
    )
    found = code_answer("Which ffmpeg option stops console input?", reading)
    assert found is not None and found.text == "-nostdin"
    assert PASSAGE[found.start : found.end] == "-nostdin" and found.score == 0.1


def test_an_answer_already_holding_code_and_the_question_s_own_tokens_are_kept():
    spans = (_span("typing.Dict is replaced by typing.MutableMapping", PASSAGE, 0.3),)
    reading = Reading(spans, 0.1)
    # the best span holds a token the question does not: its extent is the reader's
    assert code_answer("Which module replaced typing.Dict in the hints?", reading) is None
    only_asked = Reading((_span("typing.Dict", PASSAGE, 0.3),), 0.1)
    assert code_answer("Which module replaced typing.Dict in the hints?", only_asked) is None
    # and a question that asks for no code token is left alone
    prose = Reading((_span("suspend it", PASSAGE, 0.3), _span("-nostdin", PASSAGE, 0.1)), 0.1)
    assert code_answer("Why does ffmpeg stop in the background?", prose) is None
