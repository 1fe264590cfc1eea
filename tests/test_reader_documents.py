"""Reader training questions made by rule from real documents (tables and prose), read as
`index sync` reads them."""

from __future__ import annotations

import random

from ragteam.reader.training.data import held_out
from ragteam.reader.training.documents import document_groups, prose, table_questions
from ragteam.reader.training.groups import Wanted, build

PAGE = """<html><head><title>Frobnicator manual</title></head><body>
<h1>Frobnicator manual</h1>
<p>The frobnicator reads its settings at start. Every setting below may be changed in the
configuration file, and the service must be restarted after a change.</p>
<h2>Settings</h2>
<table>
<tr><th>Setting</th><th>Default</th><th>Meaning</th></tr>
<tr><td>MaxWidgets</td><td>64</td><td>the largest number of widgets kept in memory at once</td></tr>
<tr><td>IdleTimeout</td><td>300</td>
<td>seconds a quiet connection waits before it is closed</td></tr>
<tr><td>LogTarget</td><td>syslog</td>
<td>where the daemon writes its messages while it runs</td></tr>
</table>
<h2>FrobPort Directive</h2>
<table>
<tr><th>Syntax:</th><td>FrobPort number</td></tr>
<tr><th>Default:</th><td>FrobPort 7070</td></tr>
</table>
<h2>History</h2>
<p>The first frobnicator was written by Ada Quill in 1987 at the Lindholm laboratory.</p>
{filler}
</body></html>"""

FILLER = "\n".join(
    f"<h3>Topic {i}</h3><p>Paragraph {i} talks about unrelated matters such as gardening, "
    f"weather in spring and the colour of boats on the river number {i}.</p>"
    for i in range(12)
)


def _folder(tmp_path, names=("manual.html",)):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in names:
        (folder / name).write_text(PAGE.format(filler=FILLER), encoding="utf-8")
    return folder


def test_a_header_table_asks_for_a_cell_and_for_a_rows_key():
    import lxml.html

    root = lxml.html.fromstring(PAGE.format(filler=""))
    header, attributes = list(root.iter("table"))
    asked = {(a.question, a.answer) for a in table_questions(header, random.Random(0))}
    assert asked == {
        ("What is the default of MaxWidgets?", "64"),
        ("What is the default of IdleTimeout?", "300"),
        ("What is the default of LogTarget?", "syslog"),
        (
            "Which setting has the meaning the largest number of widgets kept in memory at once?",
            "MaxWidgets",
        ),
        (
            "Which setting has the meaning seconds a quiet connection waits before it is closed?",
            "IdleTimeout",
        ),
        (
            "Which setting has the meaning where the daemon writes its messages while it runs?",
            "LogTarget",
        ),
    }
    pairs = {(a.question, a.answer) for a in table_questions(attributes, random.Random(0))}
    assert pairs == {
        ("What is the syntax of FrobPort Directive?", "FrobPort number"),
        ("What is the default of FrobPort Directive?", "FrobPort 7070"),
    }


def test_groups_mark_the_answer_in_its_row_and_have_no_answer_twins(tmp_path):
    groups = list(document_groups(_folder(tmp_path), 20, 5, random.Random(3)))
    spans = [g for g in groups if g.label == "span"]
    assert spans and any(g.source == "doc-table" for g in spans)
    for g in spans:
        marked = [(t, s) for t, s in zip(g.texts, g.spans, strict=True) if s]
        assert len(marked) == 1  # one gold passage, the rest distractors
        text, where = marked[0]
        for a, b in where:
            assert text[a:b].lower() == g.answers[0].lower()
        for other in g.texts:
            if other is not text:
                assert g.answers[0].lower() not in other.lower()
    for g in groups:
        if g.label == "none":
            assert not any(g.answers[0].lower() in t.lower() for t in g.texts)
    assert len({g.qid.split("/")[0] for g in groups}) == 1  # ids start with the file's tag


def test_prose_keeps_running_text_and_drops_code_and_rows():
    assert prose("The first frobnicator was written by Ada Quill in 1987 at the laboratory.")
    assert not prose("RewriteRule ^/docs/(.+) http://new.example.com/docs/$1 [R,L] is used.")
    assert not prose("MaxWidgets | 64 | the largest number of widgets kept in memory.")
    assert not prose("Too short a sentence.")


def test_held_documents_are_whole_files(tmp_path):
    folder = _folder(tmp_path, [f"m{i}.html" for i in range(8)])
    data = tmp_path / "train"
    data.mkdir()
    (data / "hotpotqa_train.jsonl").write_text("", encoding="utf-8")
    (data / "musique_train.jsonl").write_text("", encoding="utf-8")
    built = build(data, Wanted(0, folder, 40, 8), held=0.5, seed=1)
    train_files = {g.qid.split("/")[0] for g in built.train}
    held_files = {g.qid.split("/")[0] for g in built.held}
    assert train_files and held_files and not train_files & held_files
    assert all(held_out(tag, 0.5) for tag in held_files)


def _printed_copy(path):
    """A PDF of PAGE as a browser prints it (written by reportlab): headings, paragraphs, the
    table's rows as lines, the long 'meaning' cells wrapped onto a second line."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    lines = [
        "Frobnicator manual",
        "The frobnicator reads its settings at start. Every setting below may be changed in the",
        "configuration file, and the service must be restarted after a change.",
        "Settings",
        "Setting Default Meaning",
        "MaxWidgets 64 the largest number of widgets kept in",
        "memory at once",
        "IdleTimeout 300 seconds a quiet connection waits before it",
        "is closed",
        "LogTarget syslog where the daemon writes its messages while",
        "it runs",
    ]
    for i in range(12):
        lines += [
            f"Topic {i}",
            f"Paragraph {i} talks about unrelated matters such as gardening, weather in spring",
            f"and the colour of boats on the river number {i}.",
        ]
    pdf = canvas.Canvas(str(path), pagesize=A4)
    for n, line in enumerate(lines):
        if n and n % 12 == 0:
            pdf.showPage()
        pdf.drawString(60, 780 - 20 * (n % 12), line)
    pdf.save()
    return path


def test_table_questions_are_also_read_over_the_printed_copy(tmp_path):
    folder = _folder(tmp_path)
    _printed_copy(folder / "manual.html.pdf")
    groups = list(document_groups(folder, 20, 0, random.Random(3), pdfs=True))
    printed = [g for g in groups if g.source == "doc-table-pdf" and g.label == "span"]
    assert printed
    tags = {g.qid.split("/")[0] for g in groups}
    assert len(tags) == 1  # the copy is held out with its file, never read as a file itself
    wrapped = "seconds a quiet connection waits before it is closed"
    for g in printed:
        assert g.qid.endswith("p")
        marked = [(t, s) for t, s in zip(g.texts, g.spans, strict=True) if s]
        assert len(marked) == 1
        text, where = marked[0]
        assert all(text[a:b].lower() == g.answers[0].lower() for a, b in where)
    # the row whose key (its long cell) runs over two of the PDF's lines is found
    (kept,) = [g for g in printed if wrapped in g.question]
    assert kept.answers == ("IdleTimeout",)
    gold = [t for t, s in zip(kept.texts, kept.spans, strict=True) if s]
    assert any("before it\nis closed" in t for t in gold)
    without = list(document_groups(folder, 20, 0, random.Random(3)))
    assert not any(g.source == "doc-table-pdf" for g in without)


def test_varied_wordings_ask_the_same_cells_in_other_words():
    import lxml.html

    root = lxml.html.fromstring(PAGE.format(filler=""))
    header, _ = list(root.iter("table"))
    plain = table_questions(header, random.Random(0))
    asked = [table_questions(header, random.Random(seed), varied=True) for seed in range(12)]
    pairs = {(a.answer, a.key) for a in plain}
    for one in asked:  # the same cells asked, whatever the words
        assert {(a.answer, a.key) for a in one} == pairs
    questions = {a.question for one in asked for a in one}
    assert questions - {a.question for a in plain}  # other wordings occur
    for a in (a for one in asked for a in one):
        # each names what it asks by, and what it asks for: a column, or the rows' kind
        assert a.key in a.question
        assert any(w in a.question for w in ("default", "setting"))
    # without `varied`, the rng is not drawn from: earlier runs' groups are made again
    rng = random.Random(5)
    table_questions(header, rng)
    assert rng.random() == _after_one_shuffle(5, len(plain))


def _after_one_shuffle(seed, n):
    rng = random.Random(seed)
    rng.shuffle(list(range(n)))
    return rng.random()


def test_a_folders_own_pdf_is_its_book_and_table_questions_are_read_over_it(tmp_path):
    folder = _folder(tmp_path, ["manual.html", "other.html"])
    _printed_copy(folder / "frobnicator-manual.pdf")  # a typeset book of the same manual
    groups = list(document_groups(folder, 40, 0, random.Random(3), pdfs=True))
    book = [g for g in groups if g.source == "doc-table-book" and g.label == "span"]
    assert book and all(g.qid.endswith("b") for g in book)
    for g in book:
        marked = [(t, s) for t, s in zip(g.texts, g.spans, strict=True) if s]
        assert len(marked) == 1
        text, where = marked[0]
        assert all(text[a:b].lower() == g.answers[0].lower() for a, b in where)
    # a book's questions are held out with the HTML file they were made from
    tags = {g.qid.split("/")[0] for g in book}
    html_tags = {g.qid.split("/")[0] for g in groups if g.source == "doc-table"}
    assert tags <= html_tags
    # two PDFs of their own: no telling which is the book, so neither is
    _printed_copy(folder / "second.pdf")
    again = list(document_groups(folder, 40, 0, random.Random(3), pdfs=True))
    assert not any(g.source == "doc-table-book" for g in again)
