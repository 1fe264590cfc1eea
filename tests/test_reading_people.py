"""What issue 66 asked of the reading: a table's rows read by their headers, spans of whole
words and code tokens, yes/no questions told by their grammar, heading paths in view, and an
unsure answer shown as the closest passage."""

from __future__ import annotations

import pytest

from ragteam.documents.tables import record, table_lines
from ragteam.documents.text import heading_words, markdown_units
from ragteam.reader.bounds import whole
from ragteam.reader.polar import is_polar, polar_answer
from ragteam.reader.spans import Reading, Span


def _whole(text: str, part: str) -> str:
    at = text.index(part)
    a, b = whole(text, at, at + len(part))
    return text[a:b]


@pytest.mark.parametrize(
    ("text", "part", "expected"),
    [
        ("the format %(asctime)s is used", "asctime", "%(asctime)s"),
        ("set --max-line-length to 100", "max-line", "--max-line-length"),
        ("build with -Wall.", "Wall", "-Wall"),
        ("in the open interval (0:1).", "0:1", "(0:1)"),
        ("see (section 7.6) there", "7.6", "7.6"),
        ("Meaning: quiet mode", "aning", "Meaning"),
        ("was called ‘default’.", "default", "default"),  # a quoted name, as the name
        ("uses “default_rgb.icc” when", "“default_rgb.icc”", "default_rgb.icc"),
        ("set 'a' or 'b' here", "'a' or 'b'", "'a' or 'b'"),  # quotes inside: kept
        ("run git commit --amend now", "commit --amend", "commit --amend"),
        ('said "hello world" twice', "hello", "hello"),
        ("a 40-hexdigit id", "40", "40"),
        ("returns -1 if x < 0", "1", "-1"),
        ("in 1951-1952 it", "1952", "1952"),
        ('the "Cough/Cool" single', "Cool", "Cool"),
        ("files go to /tmp here", "tmp", "/tmp"),
        ("sets \\heavyrulewidth=.08em by default", ".08", ".08em"),  # a setting's value
        ("pass --jobs=4 to it", "jobs", "--jobs"),
        ("epoch (1-Jan-2000) it", "2000", "(1-Jan-2000)"),
    ],
)
def test_a_span_is_widened_to_whole_tokens_without_the_punctuation_around_them(
    text, part, expected
):
    assert _whole(text, part) == expected


@pytest.mark.parametrize(
    ("question", "span", "echo"),
    [
        ("What is the default core.bigFileThreshold?", "core.bigFileThreshold", True),
        ("What is the default core.bigFileThreshold?", "512 MiB", False),
        ("Where does Ghostscript put its temporary files on Unix?", "Where", True),
        ("Where does Ghostscript put its temporary files on Unix?", "/tmp", False),
        ("Which came first, Pizza Hut or Little Caesars?", "Pizza Hut", False),  # a choice
        ("Between Iain Banks and Irwin Shaw, who wrote more?", "Irwin Shaw", False),
        ("What is the default?", "", False),
    ],
)
def test_a_span_of_the_question_s_own_words_is_an_echo_unless_it_offers_a_choice(
    question, span, echo
):
    from ragteam.reader.bounds import asked_words, echoes

    assert echoes(asked_words(question), span) is echo


def test_the_reader_skips_echoes_when_asked():
    """Read over a definition list's item, the reader's spans for "What is the default
    core.bigFileThreshold?" hold words of the question (the seventh reader's best answer was
    the option's name; the tenth run's mix and the thirteenth rank "512 MiB" first, the
    thirteenth's echoes, "is" and "Default", below its tenth span); `skip_echoes` leaves
    every echo out and keeps the best span that is not one."""
    from ragteam.reader import load_reader
    from ragteam.reader.bounds import asked_words, echoes
    from ragteam.types import Passage

    question = "What is the default core.bigFileThreshold?"
    text = (
        "core.bigFileThreshold\nFiles larger than this size are stored deflated, without "
        "attempting delta compression. Default is 512 MiB on all platforms."
    )
    reader, passage = load_reader(), [Passage("g", "git-config", text)]
    plain = reader.read(question, passage, top=30)
    skipping = reader.read(question, passage, top=30, skip_echoes=True)
    assert any(echoes(asked_words(question), s.text) for s in plain.spans if s.kind == "span")
    assert not any(echoes(asked_words(question), s.text) for s in skipping.spans)
    kept = [s for s in plain.spans if not echoes(asked_words(question), s.text)]
    assert skipping.best is not None and kept and skipping.best.text == kept[0].text


def test_whole_never_narrows_and_leaves_bad_offsets_alone():
    assert whole("a.b", 0, 3) == (0, 3)
    assert whole("abc", 2, 1) == (2, 1)  # not a span: as given
    assert whole("", 0, 0) == (0, 0)


def test_a_markdown_table_reads_as_records_by_its_header_when_asked():
    table = (
        "# Options\n\n| Option | Meaning | Default |\n|---|---|---|\n| -q | quiet mode | off |\n"
        "| -v | | on |\n"
    )
    _title, cells = markdown_units(table)  # the default: what the shipped reader was trained on
    assert cells[0].text.split("\n")[1] == "-q | quiet mode | off"
    _title, units = markdown_units(table, records=True)
    lines = units[0].text.split("\n")
    assert lines == [
        "Option | Meaning | Default",
        "Option: -q | Meaning: quiet mode | Default: off",
        "Option: -v | Default: on",
    ]


def test_records_of_awkward_tables():
    assert record(["A", "B"], ["1", "2", "3"]) == "A: 1 | B: 2 | 3"  # more cells than header
    assert record(["", "B"], ["x", "y"]) == "x | B: y"  # a cell under no name
    assert record(["A|B"], ["c|d"]) == "A/B: c/d"  # a bar inside a cell is not a column
    assert table_lines(None, [["a", "b"], ["", ""]]) == ["a | b"]  # no header: cells, no blanks
    long = "H" * 2000
    assert len(record([long], ["v"])) < 100  # a huge header cell is cut in each record
    rows = [[str(n), f"v{n}"] for n in range(500)]
    assert len(table_lines(["k", "v"], rows)) == 501


def test_an_html_table_reads_as_records_by_its_header_row(tmp_path):
    from ragteam.documents.web import whole_page

    html = (
        "<html><body><h1>Sizes</h1><table><tr><th>Name</th><th>Points</th></tr>"
        "<tr><td>a4</td><td>595 x 842</td></tr><tr><td>a5</td><td>420 x 595</td></tr>"
        "</table><table><tr><td>no</td><td>header</td></tr></table></body></html>"
    )
    _title, units = whole_page(html, records=True)
    text = "\n".join(u.text for u in units)
    assert "Name: a4 | Points: 595 x 842" in text
    assert "a4 | 595 x 842" in "\n".join(u.text for u in whole_page(html)[1])
    assert "no | header" in text


def test_heading_marks_of_generators_are_not_words():
    assert heading_words("Debug switches\uf0c1") == "Debug switches"
    assert heading_words("Temporary files¶") == "Temporary files"


@pytest.mark.parametrize(
    ("question", "polar"),
    [
        ("Does booktabs work together with the colortbl package?", True),
        ("When \\kWh is used on its own, does siunitx print it as kWh?", True),
        ("By default, can I push to a checked-out branch?", True),
        ("Is there an alias for \\metre, and what is it called?", False),
        ("Is it red or blue?", False),
        ("Which port does imap use?", False),
        ("X, is a film directed by which director?", False),
        ("42", False),
        ("", False),
    ],
)
def test_yes_no_questions_are_told_by_their_grammar(question, polar):
    assert is_polar(question) is polar


def _span(pid: str, kind: str, score: float) -> Span:
    return Span(pid, 0, 3, kind if kind != "span" else "abc", "abc def", 0, score, kind)


def test_a_yes_no_answer_is_the_outcome_over_the_best_span_s_passage():
    reading = Reading(
        (
            _span("p1", "span", 0.5),
            _span("p2", "yes", 0.3),  # stronger, but over another passage
            _span("p1", "no", 0.1),
            _span("p1", "yes", 0.05),
        ),
        0.1,
    )
    said = polar_answer(reading)
    assert said is not None and said.kind == "no" and said.passage_id == "p1"
    assert polar_answer(Reading((_span("p1", "span", 0.5),), 0.1)) is None


def test_a_huge_passage_is_read_in_a_bounded_part_chosen_by_the_question():
    from ragteam.reader.view import READ_CHARS, Viewed, region
    from ragteam.types import Passage

    filler = "lorem ipsum dolor sit amet " * 4000  # about 108,000 characters
    text = filler + " The harbour master is Oda Rusk. " + filler
    lo, hi = region(text, "Who is the harbour master?")
    assert hi - lo <= READ_CHARS and "harbour master is Oda Rusk" in text[lo:hi]
    blob = "A" * 2_000_000  # no whitespace at all
    viewed = Viewed.of(Passage("p", "", blob), "what?", headings=False)
    assert len(viewed.text) == READ_CHARS and viewed.unread == 2_000_000 - READ_CHARS


def test_the_reader_reads_a_huge_passage_in_bounded_time_and_says_what_it_left(tmp_path):
    import time

    from ragteam.reader import load_reader
    from ragteam.types import Passage

    filler = "lorem ipsum dolor sit amet " * 8000
    passage = Passage("big", "", filler + " The harbour master is Oda Rusk. " + filler)
    started = time.perf_counter()
    reading = load_reader().read("Who is the harbour master?", [passage], top=3)
    assert time.perf_counter() - started < 20  # 216,000 characters whole took minutes
    assert dict(reading.unread)["big"] > 200_000
    assert reading.best is not None and "Oda Rusk" in passage.text[reading.best.start - 5 :]


def test_a_follow_up_carries_the_words_people_carry_not_the_earlier_answer():
    """Issue 87: the fitted model (ragteam.followup) carries the conversation's subject, not
    the earlier answer whole ("And what about -1?" read 1001 again), through a pronoun-only
    second turn to the third, and leaves a fresh question alone."""
    from ragteam.followup import standalone

    first = "Which Pin-Priority value installs a package even if it is a downgrade?"
    turns = [("user", first), ("assistant", "1001 [1]\n\nSources: [1] apt.pdf p. 3")]
    question, follows = standalone("And what about -1?", turns, 2000)
    assert question.startswith("And what about -1? (following: ") and "Pin-Priority" in follows
    assert "1001" not in follows and "Sources" not in follows
    chain = [("user", "What does ServerAliveInterval do?"), ("assistant", "Sets a timeout")]
    chain += [("user", "What is its default?"), ("assistant", "0")]
    _question, follows = standalone("What are its Debian-specific aliases?", chain, 2000)
    assert "ServerAliveInterval" in follows
    assert standalone("Who wrote the Hevik saga?", turns, 2000) == ("Who wrote the Hevik saga?", "")
    assert standalone("And then?", turns, 20) == ("And then?", "")  # over the limit: alone


def test_office_tables_read_as_records_when_asked_and_a_slide_title_s_body_is_kept(tmp_path):
    import docx
    from pptx import Presentation
    from pptx.util import Inches

    from ragteam.documents.base import ConvertSettings
    from ragteam.documents.office import DocxConverter, PptxConverter

    document = docx.Document()
    table = document.add_table(rows=3, cols=2, style="Table Grid")
    for r, (a, b) in enumerate([("Key size", "Allowed"), ("1024", "no"), ("4096", "yes")]):
        table.cell(r, 0).text, table.cell(r, 1).text = a, b
    table.rows[0]._tr.get_or_add_trPr().append(
        docx.oxml.parse_xml(
            '<w:tblHeader xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"/>'
        )
    )
    document.save(tmp_path / "keys.docx")
    records = ConvertSettings(tables="records")
    converted = DocxConverter().convert(tmp_path / "keys.docx", records)
    assert "Key size: 4096 | Allowed: yes" in "\n".join(u.text for u in converted.units)
    plain = DocxConverter().convert(tmp_path / "keys.docx", ConvertSettings())
    assert "4096 | yes" in "\n".join(u.text for u in plain.units)

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])  # title only
    slide.shapes.title.text = "Key sizes\nKeys must be greater than 2048 bits."
    shape = slide.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1))
    for r, (a, b) in enumerate([("Size", "Use"), ("4096", "signing")]):
        shape.table.cell(r, 0).text, shape.table.cell(r, 1).text = a, b
    deck.save(tmp_path / "keys.pptx")
    (unit,) = PptxConverter().convert(tmp_path / "keys.pptx", records).units
    assert unit.where.section == ("Key sizes",)
    assert "Keys must be greater than 2048 bits." in unit.text
    assert "Size: 4096 | Use: signing" in unit.text


def test_a_passage_is_read_after_its_heading_path_and_a_span_there_says_so():
    from ragteam.reader.read import _span
    from ragteam.reader.view import Viewed
    from ragteam.types import Locator, Passage

    where = Locator("CHANGELOG.md", section=("Changelog", "0.25.1 (3rd November, 2023)¶", "Added"))
    passage = Passage("CHANGELOG.md#4", "httpx", "Add support for Python 3.12.", locator=where)
    viewed = Viewed.of(passage, "Which release first supported Python 3.12?")
    assert viewed.text.startswith("Changelog > 0.25.1 (3rd November, 2023) > Added\n")
    at = viewed.text.index("0.25.1")
    heading = _span(viewed, at, at + 6, "span", 0.9)
    assert heading.heading and heading.text == "0.25.1" and "Changelog >" in heading.sentence
    body_at = viewed.text.index("Python 3.12")
    body = _span(viewed, body_at, body_at + 11, "span", 0.5)
    assert not body.heading and passage.text[body.start : body.end] == "Python 3.12"
    plain = Viewed.of(passage, "", headings=False)  # weights that do not read headings
    assert plain.text == passage.text and plain.cut == 0


def test_an_unsure_answer_is_shown_as_the_closest_passage_not_as_an_answer(folder_index):
    from rich.console import Console

    from ragteam import answer
    from ragteam.commands.render import answer_view
    from ragteam.server.openai_chat import answer_text

    ix = folder_index(
        {
            "ferry.md": "# Ferries\n\nThe ferry to Hevik leaves at nine from the north pier.\n\n"
            "# Tides\n\nSpring tides reach four metres in March.\n"
        }
    )
    result = answer("Which bird nests on the north pier at Hevik?", index=ix)
    closest = result.closest()
    assert closest is not None and result.grounding().level != "supported"
    console = Console(record=True, width=200)
    console.print(answer_view(result))
    shown = console.export_text()
    assert "closest passage found" in shown and closest.sentence[:20] in shown
    assert answer_text(result).startswith("Closest passage found (not a sure answer):")
    assert result.to_dict()["closest"]["sentence"] == closest.sentence


def test_no_span_runs_across_a_paragraph_or_a_table_row():
    from ragteam.reader.bounds import crosses

    assert crosses("-dPDFDEBUG | PDF Interpreter\n\n-dPDFWRDEBUG | PDF Writer", 0, 40)
    rows = "Name: a3 | Points: 842 x 1191\nName: a4 | Points: 595 x 842"
    assert crosses(rows, rows.index("842 x 1191"), rows.index("a4") + 2)
    assert not crosses("a sentence that a PDF\nwrapped over two lines", 2, 30)


def test_a_heading_of_2000_characters_is_read_in_part():
    from ragteam.reader.view import MAX_HEADING, Viewed, heading_path
    from ragteam.types import Locator, Passage

    long = "Chapter " + "x" * 2000
    passage = Passage("p", "", "Body text.", locator=Locator("a.md", section=(long, "Inner")))
    path = heading_path(passage)
    assert len(path) <= MAX_HEADING and path.endswith("> Inner")
    assert Viewed.of(passage, "42").text.endswith("\nBody text.")


def test_the_tables_setting_is_recorded_and_read_back():
    from ragteam.documents.base import ConvertSettings

    assert ConvertSettings().key() == "html=main"  # what indexes recorded before it existed
    records = ConvertSettings("whole", "records")
    assert ConvertSettings.from_key(records.key()) == records
    assert ConvertSettings.from_key("html=main") == ConvertSettings()
    for bad in ("html=main;tables=rows", "tables=records", "html=main;x=1"):
        with pytest.raises(ValueError):
            ConvertSettings.from_key(bad)


KEYED = (
    "Day | Leaves | Pier\nMonday | 09:00 | north\nSaturday | 10:15 | south\nSunday | 11:30 | north"
)


@pytest.mark.parametrize(
    ("text", "question", "expected"),
    [  # a row by its key cell, after its table's header row
        (KEYED, "When does the boat leave on Sunday?", ("Day | Leaves | Pier", "Sunday | 11:30")),
        # the header row's words name a column, not a row
        (KEYED, "Which pier does the Saturday boat use?", ("Day | Leaves | Pier", "Saturday")),
        # a word on two rows weighs less than a word on one
        (KEYED, "Does it leave from north on Monday?", ("Day | Leaves | Pier", "Monday | 09:00")),
        # a definition list: a short term brings its definition
        (
            "core.editor\nThe editor used for messages.\ncore.bigFileThreshold\n"
            "Files larger than this are not diffed. The default is 512 MiB.\n"
            "core.pager\nThe pager.",
            "What is the default core.bigFileThreshold?",
            ("", "core.bigFileThreshold\nFiles larger"),
        ),
        # a PDF's two-column list: the line the question names, no header row
        (
            "rand(x) int random in (0:1) real(x) any real part\n"
            "sgn(x) any 1 if x > 0, -1 if x < 0\nsqrt(x) any square root of x",
            "what does sgn(x) return when x is negative?",
            ("", "sgn(x) any 1 if x > 0"),
        ),
    ],
)
def test_the_key_line_is_the_one_the_question_s_rarest_words_name(text, question, expected):
    from ragteam.reader.view import key_line

    found = key_line(text, question)
    assert found is not None
    header, lo, hi = found
    assert header == expected[0] and text[lo:hi].startswith(expected[1])
    assert "\n" not in text[lo:hi] or not header  # a row alone; a term with its definition


@pytest.mark.parametrize(
    ("text", "question"),
    [
        (KEYED, "When does the boat leave?"),  # no row named: every row ties
        ("Monday | 09:00\nSunday | 11:30", "When on Sunday?"),  # two lines: no key line
        (KEYED, "1998"),  # a question that is only a number none of the rows holds
        (KEYED, ""),
        ("x" * 100_000, "When on Sunday?"),  # one line without whitespace
        ("", "When?"),
    ],
)
def test_no_key_line_when_no_line_stands_out(text, question):
    from ragteam.reader.view import key_line

    assert key_line(text, question) is None


def test_a_key_line_read_beside_its_passage_is_one_answer_and_bounded():
    """The key line's reading adds to its passage's: the same words once, in the passage's
    own offsets; a 500-row table with a row of more cells than its header, and a key row of
    50,000 characters, read in bounded parts."""
    from ragteam.reader import load_reader
    from ragteam.reader.view import READ_CHARS, Viewed
    from ragteam.types import Passage

    rows = [f"Row{n} | {n * 7} | pier {n % 3} | extra | cells" for n in range(500)]
    table = Passage("t", "Times", "Name | Minutes | Pier\n" + "\n".join(rows))
    view = Viewed.key_line(table, "How many minutes is Row321?")
    assert view is not None and view.key and view.unread == 0
    assert view.text == "Name | Minutes | Pier\nRow321 | 2247 | pier 0 | extra | cells"
    reader = load_reader()
    found = reader.read("How many minutes is Row321?", [table], top=10, key_lines=True)
    places = [(s.passage_id, s.start, s.end, s.kind) for s in found.spans]
    assert len(places) == len(set(places))  # the two readings of one place are one span
    assert all(table.text[s.start : s.end] == s.text for s in found.spans if s.kind == "span")
    long = Passage("l", "", "Key | Value\nalpha | 1\nbeta | " + "word " * 10_000 + "\ngamma | 3")
    view = Viewed.key_line(long, "What is the value of beta?")
    assert view is not None and len(view.text) <= READ_CHARS + len("Key | Value\n")
    assert reader.read("What is the value of beta?", [long], key_lines=True).best is not None
