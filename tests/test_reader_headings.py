"""Questions whose answer is a heading (issue 66): told by their grammar, answered by the
heading of the passage that says most of the question, or by the finer release its text names."""

from __future__ import annotations

import pytest

from ragteam.locator import Locator
from ragteam.reader.headings import by_content, heading_span, named_heading
from ragteam.types import Passage, Span


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Which gnuplot version introduced spider plots?", "version"),
        ("Since which python-pptx version can I embed an Excel file?", "version"),
        ("Which httpx release first supported Python 3.12?", "version"),
        ("When was zstd content decoding added?", "version"),
        ("When was the --socks flag added to httpx?", "version"),
        ("Which chapter of the nano manual lists the toggles?", "chapter"),
        ("In which section of the manual is hypcap explained?", "section"),
        ("Under which heading does the guide discuss config.sub?", "section"),
        ("Which subsection covers the watch file?", "section"),
        ("What epoch did gnuplot versions before 5 use?", None),  # asks for an epoch
        ("What is one difference in the mini version of baccarat?", None),
        ("In what year did the film release that introduced the Predators?", None),
        ("When was the scientist who introduced Rule 30 born?", None),
        ("Which part of Ireland is Munster in?", None),
    ],
)
def test_the_heading_a_question_names_is_told_by_its_grammar(question, kind):
    """Which heading a question names (whether it asks for one at all is learned:
    tests/test_heading_questions.py)."""
    assert named_heading(question) == kind


def test_a_heading_question_is_answered_by_the_heading_its_passage_stands_under(folder_index):
    """A changelog's versions stand only in its headings: the reader finds the entry, the
    answer is the version it stands under, marked as a heading span of that passage."""
    from ragteam import answer

    ix = folder_index(
        {
            "CHANGELOG.md": "# Changelog\n\n## 2.4.1 (3rd May, 2024)\n\n### Added\n\n"
            "- Support for reading tide tables from CSV files.\n\n"
            "## 2.3.0 (1st March, 2024)\n\n### Fixed\n\n"
            "- The ferry timetable no longer skips Sundays.\n",
            "guide.md": "# Harbour guide\n\n## 3 Moorings\n\n"
            "Visitors moor at the north pier for two nights.\n",
        }
    )
    asked = answer("Which release added reading tide tables from CSV?", index=ix)
    assert asked.text == "2.4.1" and asked.evidence[0].heading
    assert asked.evidence[0].sentence.startswith("Changelog > 2.4.1 (3rd May, 2024)")
    chapter = answer("Which chapter of the guide says where visitors moor?", index=ix)
    assert chapter.text == "3 Moorings" and chapter.evidence[0].heading
    plain = answer("Where do visitors moor?", index=ix)
    assert not plain.evidence[0].heading  # not a heading question: the reader's own words
    off = answer(
        "Which release added reading tide tables from CSV?",
        index=ix,
        options={"heading_answers": False},
    )
    assert off.text != "2.4.1"


def _under(pid: str, section: tuple[str, ...], text: str) -> Passage:
    return Passage(pid, "", text, locator=Locator("NEWS", section=section))


def test_the_passage_that_says_most_of_the_question_rarer_words_weighing_more_comes_first():
    """Every passage says "version"; only one says the rare "week-date": it comes first, and
    passages that say as much keep their order."""
    passages = [
        _under("a", ("5.5",), "The version string changed."),
        _under("b", ("5.4",), "Week-date formats now parse; see the version notes."),
        _under("c", ("5.3",), "A version flag was added."),
        _under("d", ("5.2",), "A version flag was renamed."),
    ]
    ranked = by_content("In which version were week-date formats fixed?", passages)
    assert [p.id for p in ranked] == ["b", "a", "c", "d"]
    assert by_content("zzz?", passages) == passages  # no word said: the order is kept


def _found(pid: str) -> Span:
    return Span(pid, 0, 4, "week", "week", 0, 0.7)


def test_a_finer_release_named_in_the_text_answers_before_the_heading_s_version():
    text = "Week-date formats worked incorrectly prior to version 5.4.2. Fixed now."
    passage = _under("p", ("Changes in version 5.4", "Week-date"), text)
    said = heading_span("version", passage, _found("p"))
    assert said is not None and said.text == "5.4.2" and not said.heading
    assert text[said.start : said.end] == "5.4.2" and said.sentence.endswith("5.4.2.")
    assert said.score == 0.7  # the confidence of the words that found the passage


@pytest.mark.parametrize(
    "text",
    [
        "Fixed between 5.4.1 and 5.4.3.",  # two finer releases: which one is not said
        "Since 5.40 week-dates parse.",  # not a release of 5.4
        "See 15.4.2 for details.",  # a release of another version
        "No release is named.",
    ],
)
def test_the_heading_s_version_answers_unless_the_text_names_one_finer_release(text):
    passage = _under("p", ("Changes in version 5.4", "Week-date"), text)
    said = heading_span("version", passage, _found("p"))
    assert said is not None and said.heading and said.text == "5.4"
    assert said.sentence == "Changes in version 5.4 > Week-date"


def test_a_heading_question_is_answered_from_the_passage_that_says_it_not_the_best_span():
    """The reader's best span stands in an entry about another thing; the passage that says
    the question's words is the one whose heading answers."""
    from ragteam.reader import Reading
    from ragteam.reader.stage import _under_heading

    passages = [
        _under("x", ("Changes in 2.0",), "Proxies are read from the environment."),
        _under("y", ("Changes in 1.9",), "Brotli decoding of responses is supported."),
    ]
    reading = Reading((Span("x", 0, 7, "Proxies", "Proxies are read.", 0, 0.9),), 0.1)
    said = _under_heading("version", "Which release added brotli decoding?", reading, passages)
    assert said is not None and said.passage_id == "y" and said.text == "1.9" and said.heading


def test_a_question_that_names_a_release_is_read_over_the_entries_under_it():
    from ragteam.reader.headings import under_release

    passages = [
        _under("a", ("Changelog", "0.12.0", "Changed"), "Switched to private module names."),
        _under("b", ("Changelog", "0.23.0", "Changed"), "Use utf-8 as the default charset."),
        _under("c", ("Changelog", "v0.23.0", "Fixed"), "Empty query parameters are kept."),
    ]
    named = under_release("What default charset did it switch to in 0.23.0?", passages)
    assert [p.id for p in named] == ["b", "c"]
    assert under_release("What did it switch to in 9.9.9?", passages) == passages  # none: all
    assert under_release("What did it switch to?", passages) == passages
    assert under_release("What changed in 0.23?", passages) == passages  # not 0.23.0
    history = [
        _under("h", ("Version history",), "So a new regular release 3.0 could be built."),
        _under("k", ("Compatibility", "caption v3.0"), "Only this check was added."),
        _under("m", ("Version history",), "The 2.0 side-version was made public."),
    ]
    named = under_release("Who helped build release 3.0?", history)
    assert [p.id for p in named] == ["h", "k"]  # the text naming it counts as its heading does


def test_a_release_named_in_a_question_is_answered_from_its_entries(folder_index):
    from ragteam import answer

    ix = folder_index(
        {
            "CHANGELOG.md": "# Changelog\n\n## 0.23.0 (23rd May, 2022)\n\n### Changed\n\n"
            "- Use utf-8 as the default character set for decoding responses.\n\n"
            "## 0.12.0 (March 9th, 2020)\n\n### Changed\n\n"
            "- The 0.12 release switches the default character set detection to chardet, "
            "by switching to private module names.\n"
        }
    )
    question = "What default character set did the library switch to in 0.23.0?"
    asked = answer(question, index=ix)
    section = asked.evidence[0].place.section
    assert asked.text == "utf-8" and any(h.startswith("0.23.0") for h in section), section
    reads = [s for s in asked.trace.steps if s.kind == "read"]
    named, whole = reads[-2], reads[-1]  # the release's entries alone, then all it found
    assert len(named.input["passages"]) < len(whole.input["passages"])
    off = answer(question, index=ix, options={"heading_answers": False})
    assert off.text != "utf-8"  # without it, the reader reads the other release's entry


def test_a_light_verb_of_the_question_does_not_choose_the_passage():
    """ "made" is the rarest word of the question in the block, but says nothing of the entry
    asked for: the entry that says the rest of the question comes first."""
    passages = [
        _under("a", ("17.1.0",), "It made it easier to define attributes."),
        _under("b", ("21.3.0",), "Converters now run on attributes."),
        *(_under(f"c{n}", (f"20.{n}.0",), "Converters run faster.") for n in range(3)),
    ]
    asked = "Which release made converters run on attributes?"
    assert by_content(asked, passages)[0].id == "b"


class _Scripted:
    """A reader whose answerability head says "no answer" only over fewer than three
    passages, its best span the first passage's first word (control flow only: the real
    reader is read in the test above)."""

    identity = "scripted"
    calibration = type("C", (), {"abstain": 0.5, "prior": None})()  # no passage prior
    ranker = None  # the rules' fixed order picks (no fitted answer ranker)
    decider_path = None  # the rules decide yes and no (no yes/no decider)

    def read(self, question, passages, top=5, key_lines=False, skip_echoes=False):  # noqa: ANN001, ANN201
        from ragteam.reader.spans import Reading, Span

        first = passages[0]
        word = first.text.split()[0]
        span = Span(first.id, 0, len(word), word, first.text, 0, 0.9)
        return Reading((span,), 0.1 if len(passages) >= 3 else 0.9)

    def confidence(self, reading, span, passages):  # noqa: ANN001, ANN201
        return 0.8


def test_whether_a_release_s_entries_hold_the_answer_is_judged_over_all_it_found():
    from ragteam.reader.stage import Rules, answer_by_reading
    from ragteam.trace import Trace

    passages = [
        _under("a", ("Changelog", "0.12.0"), "chardet switched to private module names."),
        _under("b", ("Changelog", "0.23.0"), "utf-8 is the default charset."),
        _under("c", ("Changelog", "0.20.0"), "brotli decoding is supported."),
    ]
    trace = Trace()
    said = answer_by_reading(
        "What charset did it switch to in 0.23.0?", passages, trace, "read", _Scripted(),
        Rules(heading_answers=True),
    )  # fmt: skip
    reads = [s for s in trace.steps if s.kind == "read"]
    assert [len(s.input["passages"]) for s in reads] == [1, 3]
    assert said is not None and said.text == "utf-8"  # from the release's entry
    assert said.evidence[0].answerable  # "no answer" over the one entry (0.9) not taken
