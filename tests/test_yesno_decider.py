"""The yes/no decider (ragteam/reader/decider.py): the context it reads, how `read` uses it, its
training data (BoolQ's rows and docqa-train's yes/no questions, validation files never read)
and a real, tiny training run whose file a reader then uses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragteam.errors import InputError
from ragteam.reader.decider import AFTER, BEFORE, context, decider_path, load_decider
from ragteam.reader.polar import polar_answer
from ragteam.reader.spans import Reading, Span


def test_the_context_holds_the_sentence_and_starts_on_a_word():
    text = "alpha " * 100 + "The pager is built in. " + "omega " * 200
    start = text.index("The pager")
    end = start + len("The pager is built in.")
    around = context(text, start, end)
    assert "The pager is built in." in around
    assert around.startswith("alpha") and len(around) <= BEFORE + AFTER + (end - start)
    assert context("short", 0, 5) == "short"


def _reading(sentence: str) -> Reading:
    best = Span("p", 4, 9, "pager", sentence, 0, 0.5)
    yes = Span("p", 0, len(sentence), "yes", sentence, 0, 0.3, "yes")
    no = Span("p", 0, len(sentence), "no", sentence, 0, 0.2, "no")
    return Reading((best, yes, no), 0.1)


@pytest.mark.parametrize(("p_yes", "word", "score"), [(0.8, "yes", 0.3), (0.2, "no", 0.2)])
def test_the_decider_decides_and_the_answer_rests_on_the_sentence(p_yes, word, score):
    sentence = "The pager is not built in."  # the old rule would read "not" as no
    seen: list[tuple[str, str]] = []

    def decide(question: str, around: str) -> float:
        seen.append((question, around))
        return p_yes

    said = polar_answer(_reading(sentence), "Is the pager built in?", sentence, decide)
    assert said is not None and (said.kind, said.text) == (word, word)
    assert (said.start, said.end, said.score) == (0, len(sentence), score)
    assert seen == [("Is the pager built in?", sentence)]


def test_without_a_decider_the_stated_rule_of_before_decides():
    sentence = "The pager is not built in."
    said = polar_answer(_reading(sentence), "Is the pager built in?", sentence)
    assert said is not None and said.kind == "no"


def _people(tmp_path: Path) -> Path:
    """A docqa-train-like folder: one part, a training file and a validation file."""
    part = tmp_path / "docs" / "tools"
    (part / "files").mkdir(parents=True)
    (part / "files" / "pager.md").write_text(
        "# The pager\n\nThe pager is built in and needs no setup.\n\n"
        "# Colours\n\nColours are not supported on a dumb terminal.\n",
        encoding="utf-8",
    )
    (part / "files" / "config.rst").write_text(  # a validation file: never read
        "Options\n=======\n\nThe cache is always on.\n", encoding="utf-8"
    )
    rows = [
        ("Is the pager built in?", "yes", "files/pager.md", "The pager is built in"),
        ("Are colours supported on a dumb terminal?", "no", "files/pager.md", "Colours are not"),
        ("What is the pager?", "built in", "files/pager.md", "The pager is built in"),
        ("Is the cache always on?", "yes", "files/config.rst", "The cache is always on."),
    ]
    with (part / "questions.jsonl").open("w", encoding="utf-8") as handle:
        for n, (q, a, f, e) in enumerate(rows):
            row = {"id": f"tools-{n}", "question": q, "answers": [a], "file": f, "page": None}
            handle.write(json.dumps(row | {"evidence": e, "kind": "yesno"}) + "\n")
    return tmp_path / "docs"


def _boolq(tmp_path: Path) -> Path:
    path = tmp_path / "boolq.jsonl"
    rows = [
        {"question": f"is {w} a colour", "passage": f"{w.title()} is a colour.", "answer": True}
        for w in ("red", "green", "blue", "cyan", "amber", "teal")
    ] + [
        {"question": f"is {w} a colour", "passage": f"{w.title()} is a metal.", "answer": False}
        for w in ("iron", "tin", "lead", "zinc", "gold", "nickel")
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_training_data_reads_people_s_yes_no_questions_never_a_validation_file(tmp_path):
    from ragteam.reader.training.yesno import boolq_examples, people_examples

    asked = list(people_examples(_people(tmp_path), tmp_path / "work"))
    assert [(a.question, a.yes) for a in asked] == [
        ("Is the pager built in?", True),
        ("Are colours supported on a dumb terminal?", False),
    ]
    assert "The pager is built in" in asked[0].context
    rows = boolq_examples(_boolq(tmp_path))
    assert len(rows) == 12 and rows[0].question == "Is red a colour?" and rows[0].yes
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match="no BoolQ rows"):
        boolq_examples(tmp_path / "empty.jsonl")


def test_a_trained_decider_is_used_by_the_reader_it_stands_beside(tmp_path):
    from ragteam import answer
    from ragteam.minilm.settings import TopLayersSettings
    from ragteam.reader.read import default_weights
    from ragteam.reader.training.yesno import train_yesno
    from ragteam.retrieval import build_index

    folder = tmp_path / "reader"
    folder.mkdir()
    for name in ("reader-minilm.safetensors", "reader-minilm.calibration.json"):
        shutil.copy(default_weights().with_name(name), folder / name)
    out = decider_path(folder / "reader-minilm.safetensors")
    settings = TopLayersSettings(epochs=1.0, lr=1e-4, layers=1, batch=8, threads=2)
    record = train_yesno(_people(tmp_path), _boolq(tmp_path), tmp_path / "w", out, settings)
    assert out.is_file() and record["chosen"] is not None
    assert sum(record["examples"].values()) == 14  # 12 BoolQ rows and 2 people's questions
    decider = load_decider(out)
    assert 0.0 < decider.yes("Is red a colour?", "Red is a colour.") < 1.0
    corpus = tmp_path / "corpus.jsonl"
    row = {"id": "p1", "title": "Pager", "text": "The pager is built in and needs no setup."}
    corpus.write_text(json.dumps(row) + "\n", encoding="utf-8")
    build_index(corpus, tmp_path / "ix", retriever="bm25")
    asked = answer(
        "Is the pager built in?",
        index=tmp_path / "ix",
        strategy="read",
        options={"weights": str(folder / "reader-minilm.safetensors")},
    )
    assert asked.text in ("yes", "no")
    notes = [s.output for s in asked.trace.steps if s.meta.get("event") == "decided"]
    assert len(notes) == 1 and notes[0].startswith("the yes/no decider: P(yes)")


def test_a_missing_or_foreign_decider_file_says_what_to_do(tmp_path):
    with pytest.raises(InputError, match="ragteam train yesno"):
        load_decider(tmp_path / "none.safetensors")
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a weights file")
    with pytest.raises(InputError, match="ragteam train yesno"):
        load_decider(bad)
