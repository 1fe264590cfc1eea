"""Questions asking for several things (`ragteam.reader.lists`): an answer that is one item of
a list written out grows to the whole list, and only then."""

from __future__ import annotations

import pytest

from ragteam.reader.lists import asks_many, list_answer
from ragteam.types import Span


def _span(text: str, words: str, kind: str = "span", heading: bool = False) -> Span:
    at = text.index(words)
    return Span("p", at, at + len(words), words, text, 0, 0.4, kind, heading)


@pytest.mark.parametrize(
    "question, many",
    [
        ("Which options does the -dFitPage switch set?", True),
        ("In the simplest table, which three rule commands do you use?", True),
        ("Besides openpgp, which other values does gpg.format accept?", True),
        ("What are the valid values of core.autocrlf?", True),
        ("Which configuration scopes count as protected?", True),
        ("What does -q do?", False),
        ("Which status does the bar show?", False),
        ("What is the default width?", False),
        ("Which version added arrays?", False),
    ],
)
def test_a_question_asks_for_several_things_by_its_grammar(question, many):
    assert asks_many(question) is many


@pytest.mark.parametrize(
    "question, text, item, grown",
    [
        (
            "Which options bring the old behaviour back?",
            "Use --breaklonglines, --jumpyscrolling, and --emptyline (or -bje) for that.",
            "--jumpyscrolling",
            "--breaklonglines, --jumpyscrolling, and --emptyline",
        ),
        (
            "Which locales does it ship configurations for?",
            "Configurations are provided for the locales UK, US, DE, PL, FR, SI and ZA.",
            "locales UK",
            "locales UK, US, DE, PL, FR, SI and ZA",
        ),
        (
            "Besides openpgp, which other values does gpg.format accept?",
            'Default is "openpgp". Other possible values are "x509", "ssh".',
            "x509",
            '"x509", "ssh"',
        ),
        (
            "Which transport classes got a socket_options argument?",
            "Add it to `httpx.HTTPTransport` and `httpx.AsyncHTTPTransport` classes.",
            "httpx.HTTPTransport",
            "`httpx.HTTPTransport` and `httpx.AsyncHTTPTransport`",
        ),
        (  # items glossed in parentheses
            "Which locales does it ship configurations for?",
            "It has configurations for locales UK, US, DE (Germany), SI (Slovene) and ZA. It",
            "locales UK",
            "locales UK, US, DE (Germany), SI (Slovene) and ZA",
        ),
        (  # the last item: the list grows to its left, over ", and"
            "Which refresh command variables does XOAUTH2 use?",
            "It uses the same ones: $imap_refresh, $pop_refresh, and $smtp_refresh.",
            "$smtp_refresh",
            "$imap_refresh, $pop_refresh, and $smtp_refresh",
        ),
        (
            "Which scopes count as protected configuration?",
            "Protected configuration refers to the system, global, and command scopes.",
            "global, and command scopes",
            "system, global, and command scopes",
        ),
    ],
)
def test_an_item_of_a_list_grows_to_the_list(question, text, item, grown):
    said = list_answer(question, text, _span(text, item))
    assert said is not None and said.text == grown and text[said.start : said.end] == grown
    assert said.score == 0.4 and grown in said.sentence


@pytest.mark.parametrize(
    "question, text, item",
    [
        # one thing asked for
        ("Which option keeps long lines?", "Use -b, -j, and -e for that.", "-j"),
        # no list of items shaped like the answer: prose after a file name, a sentence's end
        ("Which files are read at startup?", "Bash reads ~/.bashrc, then it stops.", "~/.bashrc"),
        ("Which fruits are there?", "We grow apples, pears. Plums and figs too.", "pears"),
        # a span that closes its list with "and" is the list (", and may not" is no item)
        (
            "Which characters may a name contain?",
            "None other than letters, digits, and underscores, and may not start with a digit.",
            "letters, digits, and underscores",
        ),
        # a span of prose is not an item
        (
            "Which parsers can be turned off?",
            "If speed matters and high performance is desired, then the parser is off.",
            "high performance is desired",
        ),
        # plain words joined by commas alone are no list
        ("Which colours are used?", "It is red, as the bar is.", "red"),
    ],
)
def test_no_list_no_plural_no_change(question, text, item):
    assert list_answer(question, text, _span(text, item)) is None


def test_a_heading_s_words_and_a_yes_no_reading_are_left_alone():
    text = "Use -b, -j, and -e."
    question = "Which options are there?"
    assert list_answer(question, text, _span(text, "-j", heading=True)) is None
    assert list_answer(question, text, _span(text, "-j", kind="yes")) is None
    assert list_answer(question, text, _span(text, "-j")) is not None


def test_a_list_asked_of_a_real_page_is_answered_whole(html_index):
    """Through the default strategy, over an HTML page: the reader's span is one of the
    options; the answer names all three, which the reader alone does not give. (Asked "Which
    options bring Pico's old behaviour back in nano?", the shipped reader, the tenth run's mix,
    reads the next sentence's "The --fill", which no list rule mends.)"""
    from ragteam import answer

    body = (
        "<h1>Pico compatibility</h1><p>Nano's defaults differ from Pico's. To get the old "
        "behaviour back, use --breaklonglines, --jumpyscrolling, and --emptyline together. "
        "The --fill option sets the width at which lines are broken.</p>"
        "<h2>Colours</h2><p>The title bar is shown in bold white on blue.</p>"
    )
    index = html_index("nano.html", "Nano", body)
    question = "Which options do I use to get the old behaviour back?"
    asked = answer(question, index=index)
    assert asked.text == "--breaklonglines, --jumpyscrolling, and --emptyline"
    off = answer(question, index=index, options={"list_answers": False})
    assert off.text != asked.text
