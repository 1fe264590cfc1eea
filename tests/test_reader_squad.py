"""SQuAD-format files as a source of the reader's training groups (`train reader --squad`)."""

from __future__ import annotations

import json
import random

import pytest

from ragteam.errors import InputError
from ragteam.reader.training.data import occurrences, squad

PARAGRAPHS = [
    "The Wrenhold Lighthouse was built by Emrik Tollan in 1871 from local granite.",
    "The harbour master of Wrenhold is Ana Lind, appointed in 1998.",
    "The ferry to Hevik leaves from pier two every morning at nine.",
    "Wrenhold's market is held on Saturdays in the old fish hall.",
    "The town council meets in the granite hall beside the church.",
    "Wrenhold has a museum of shipwrecks opened in 1956.",
    "Most of Wrenhold's houses are painted white or pale blue.",
]


def _file(tmp_path, impossible=False):
    qas = [
        {
            "id": "q1",
            "question": "Who built the Wrenhold Lighthouse?",
            "answers": [{"text": "Emrik Tollan", "answer_start": 37}],
        },
        {
            "id": "q2",
            "question": "What was the lighthouse's colour?",
            "answers": [],
            "is_impossible": impossible,
        },
    ]
    paragraphs = [{"context": PARAGRAPHS[0], "qas": qas}]
    paragraphs += [{"context": t, "qas": []} for t in PARAGRAPHS[1:]]
    path = tmp_path / "squad.json"
    article = {"title": "Wrenhold", "paragraphs": paragraphs}
    path.write_text(json.dumps({"version": "2.0", "data": [article]}))
    return path


def test_a_question_is_read_over_its_paragraph_and_others_of_its_article(tmp_path):
    groups = list(squad(_file(tmp_path, impossible=True), random.Random(3)))
    span = next(g for g in groups if g.label == "span")
    gold = span.texts.index(PARAGRAPHS[0])
    assert span.texts[gold][slice(*span.spans[gold][0])] == "Emrik Tollan"
    others = [t for i, t in enumerate(span.texts) if i != gold]
    assert len(others) == 3 and not any(span.spans[i] for i in range(4) if i != gold)
    assert all(t in PARAGRAPHS for t in others)
    none = [g for g in groups if g.qid == span.qid and g.label == "none"]
    assert none and not any(occurrences(t, "Emrik Tollan") for t in none[0].texts)
    assert span.qid.split("/")[0] == "squad:Wrenhold#0"  # held out with its paragraph
    impossible = next(g for g in groups if g.qid.endswith("/q2"))
    assert impossible.label == "none" and impossible.texts == (PARAGRAPHS[0],)


def test_a_question_without_answers_and_not_impossible_gives_no_group(tmp_path):
    groups = list(squad(_file(tmp_path, impossible=False), random.Random(3)))
    assert not [g for g in groups if g.qid.endswith("/q2")]


def test_squad_files_are_named_in_the_groups_settings_and_bad_ones_are_clear_errors(tmp_path):
    from test_reader import _training_folder

    from ragteam.reader.training.settings import ReaderSettings
    from ragteam.reader.training.train import reader_groups

    data = _training_folder(tmp_path / "train")
    settings = ReaderSettings(clozes=4, held_share=0.3)
    file = _file(tmp_path)
    out = tmp_path / "groups.jsonl.gz"
    built = reader_groups(data, settings, None, out, lambda _: None, (file,))
    assert any(g.source == "squad" for g in [*built.train, *built.held])
    with pytest.raises(InputError, match="pass the same settings"):
        reader_groups(data, settings, None, out, lambda _: None)  # built with the file
    with pytest.raises(InputError, match="no such SQuAD-format file"):
        reader_groups(data, settings, None, None, lambda _: None, (tmp_path / "gone.json",))
    bad = tmp_path / "bad.json"
    for text in ("{not json", '{"data": [{"title": "x", "paragraphs": [{"qas": []}]}]}'):
        bad.write_text(text)  # not JSON; a paragraph without its context
        with pytest.raises(InputError, match="cannot be read as a SQuAD-format file"):
            reader_groups(data, settings, None, None, lambda _: None, (bad,))
