"""Whether a question asks for a heading, learned from the kinds of questions people wrote
(`ragteam.reader.asks`, fitted by `ragteam.reader.training.asks`): the shipped model on
phrasings the former rule missed and on questions asking for values; its fit on a folder laid
out as docqa-train, which never reads a validation file's questions; a damaged model file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragteam.errors import InputError
from ragteam.reader.asks import HeadingQuestions, asks_heading, shipped
from ragteam.reader.training.asks import asked_rows, cross_validated, fit_heading_questions


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Where in the guidebook are the status lines explained?", "section"),
        ("Which part of the hledger manual covers strict mode?", "section"),
        ("Which section of the PARI manual documents isprime?", "section"),
        ("Which chapter of the nano manual lists the toggles?", "chapter"),
        ("Which gnuplot version introduced spider plots?", "version"),  # the document's to say
        ("What is the default port?", None),
        ("How many seconds does the client wait before it retries?", None),
        ("Who wrote the book?", None),
    ],
)
def test_the_shipped_model_tells_heading_questions(question: str, kind: str | None) -> None:
    assert asks_heading(question) == kind


def test_the_shipped_model_says_what_it_was_fitted_on() -> None:
    fitted = shipped().fitted
    assert fitted["questions"] > 1000 and fitted["headings"] > 100
    assert fitted["precision"] >= 0.9  # cross-validated by file, as fitted


def _part(root: Path, name: str, rows: list[tuple[str, str, str]]) -> None:
    (root / name).mkdir(parents=True)
    lines = [
        json.dumps({"id": f"{name}-{n}", "question": q, "kind": kind, "file": f"files/{file}"})
        for n, (q, kind, file) in enumerate(rows)
    ]
    (root / name / "questions.jsonl").write_text("\n".join(lines) + "\n")


def _folder(tmp_path: Path) -> Path:
    root = tmp_path / "people"
    topics = ["tide tables", "pilot boarding", "harbour fees", "mooring", "buoys", "ferries"]
    heads = ["Which section of the {} guide covers {}?", "Where in the {} manual is {} explained?"]
    values = ["What is the fee for {} at {}?", "How long does {} take in {}?"]
    for part in ("north", "south", "east"):
        rows = []
        for n, topic in enumerate(topics):
            file = f"{part}{n % 3}.html"
            rows += [(h.format(part, topic), "heading", file) for h in heads]
            rows += [(v.format(topic, part), "table", file) for v in values]
        held = "Which zanzibar section holds the zanzibar tables?"
        rows.append((held, "heading", "geometry.pdf"))  # a validation file's: never read
        _part(root, part, rows)
    return root


def test_a_fit_learns_heading_questions_and_never_reads_a_validation_file(tmp_path: Path) -> None:
    rows = asked_rows(_folder(tmp_path))
    assert len(rows) == 3 * 24 and not any("zanzibar" in r.question for r in rows)
    model = fit_heading_questions(rows, l2=1.0, threshold=0.5)
    assert "zanzibar" not in model.vocab
    assert asks_heading("Where in the west manual is anchoring explained?", model) == "section"
    assert asks_heading("What is the fee for anchoring at west?", model) is None
    checked = cross_validated(rows, 1.0, 0.5)
    assert checked["headings"] == 36 and checked["recall"] > 0.9 and checked["precision"] > 0.9
    again = HeadingQuestions.read(_written(tmp_path / "m.json", model.to_json()))
    assert again.probability("Which section covers buoys?") == model.probability(
        "Which section covers buoys?"
    )


def _written(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_a_fit_needs_both_kinds_and_a_docqa_folder(tmp_path: Path) -> None:
    rows = [r for r in asked_rows(_folder(tmp_path)) if r.heading]
    with pytest.raises(InputError, match="both|do not"):
        fit_heading_questions(rows)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="docqa-train"):
        asked_rows(tmp_path / "empty")


def test_a_damaged_model_file_says_how_to_mend_it(tmp_path: Path) -> None:
    good = shipped().to_json()
    for bad in ("{", json.dumps({**good, "vocab": good["vocab"][:3]}), json.dumps({"x": 1})):
        path = tmp_path / "bad.json"
        path.write_text(bad)
        with pytest.raises(InputError, match="heading_fit.py"):
            HeadingQuestions.read(path)
