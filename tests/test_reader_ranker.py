"""Issue 86: reader training groups from questions people wrote over documents, WikiTableQuestions
tables as `index sync` writes them, and the fitted answer ranker that picks among every
proposal in place of a fixed order of rules."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from ragteam.common.linear import Linear
from ragteam.reader.ranker import FEATURES, POLAR_FEATURES, Ranker, features, ranker_path
from ragteam.reader.training.people import people_groups
from ragteam.reader.training.ranker import Example, fit_ranker, is_right, threshold_for
from ragteam.reader.training.tables import passages

MANUAL = """# Frobnicator manual

## Settings

The frobnicator keeps at most 64 widgets in memory at once. The limit is set by MaxWidgets.

## Logging

The daemon writes its messages to syslog while it runs. Logging cannot be turned off.

## History

The first frobnicator was written by Ada Quill in 1987 at the Lindholm laboratory.

""" + "\n".join(
    f"## Topic {i}\n\nParagraph {i} talks about gardening, spring weather and the colour of "
    f"boats on river number {i}.\n"
    for i in range(10)
)


def _part(tmp_path, rows):
    part = tmp_path / "data" / "manuals"
    (part / "files").mkdir(parents=True)
    (part / "files" / "frob.md").write_text(MANUAL, encoding="utf-8")
    (part / "files" / "held.md").write_text(MANUAL.replace("Ada Quill", "Bo Lind"), "utf-8")
    lines = [json.dumps(r) for r in rows]
    (part / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return part.parent


def _q(qid, question, answers, evidence, file="files/frob.md"):
    return {
        "id": qid,
        "question": question,
        "answers": answers,
        "evidence": evidence,
        "file": file if answers else None,
        "page": None,
        "kind": "prose",
    }


def test_people_groups_mark_the_gold_passage_and_leave_validation_files_out(tmp_path):
    from ragteam.retrieval.index import IndexSettings

    data = _part(
        tmp_path,
        [
            _q(
                "m-1",
                "who wrote the first frobnicator?",
                ["Ada Quill"],
                "The first frobnicator was written by Ada Quill in 1987.",
            ),
            _q("m-2", "can I turn logging off?", ["no"], "Logging cannot be turned off."),
            _q("m-3", "what colour is the frobnicator's case?", [], ""),
            _q(
                "m-4",
                "who wrote the first frobnicator?",
                ["Bo Lind"],
                "The first frobnicator was written by Bo Lind in 1987 at the Lindholm laboratory.",
                file="files/held.md",
            ),
        ],
    )
    groups = list(
        people_groups(
            data,
            tmp_path / "work",
            random.Random(1),
            ("held.md",),
            IndexSettings(retriever="bm25"),
            headings=True,
        )
    )
    by_id = {}
    for g in groups:
        by_id.setdefault(g.qid.split("/")[1], []).append(g)
    assert "m-4" not in by_id  # a validation file's question gives no group
    # nor is a validation file's passage ever shown, not even as a distractor
    assert not [g.qid for g in groups if any("Bo Lind" in t for t in g.texts)]
    span = next(g for g in by_id["m-1"] if g.label == "span")
    marked = [(t, s) for t, s in zip(span.texts, span.spans, strict=True) if s]
    assert marked and all(t[a:b] == "Ada Quill" for t, spans in marked for a, b in spans)
    assert all("Ada Quill" not in t for t, s in zip(span.texts, span.spans, strict=True) if not s)
    assert all(t.startswith("Frobnicator manual") for t in span.texts)  # read with its heading
    polar = by_id["m-2"][0]
    assert polar.label == "no" and "cannot be turned off" in polar.texts[polar.gold[0]]
    assert [g.label for g in by_id["m-3"]] == ["none"]
    assert len({g.qid.split("/")[0] for g in by_id["m-1"]}) == 1  # held out by file


def test_the_office_parts_unanswerable_questions_are_validation_and_never_trained_on(tmp_path):
    from ragteam.reader.training.people import is_validation
    from ragteam.retrieval.index import IndexSettings

    data = _part(tmp_path, [_q("office-7", "what colour is the frobnicator's case?", [], "")])
    (data / "manuals").rename(data / "office")  # the part its README holds them with
    unanswerable = {"id": "office-7", "file": None}
    assert is_validation("office", unanswerable) and not is_validation("manuals", unanswerable)
    assert is_validation("x", {"id": "x-1", "file": "files/held.md"}, ("held.md",))
    groups = people_groups(
        data, tmp_path / "work", random.Random(1), (), IndexSettings(retriever="bm25")
    )
    assert list(groups) == []


def test_peoples_training_groups_can_be_read_more_often_than_the_replayed_ones():
    from ragteam.reader.training.data import Group
    from ragteam.reader.training.groups import weighted

    def group(qid: str, source: str) -> Group:
        return Group(qid, ("text",), "none", ((),), (), (), source, qid)

    train = [group("a", "people"), group("b", "hotpotqa-train"), group("c", "people")]
    thrice = weighted(train, "people", 3)
    assert [g.qid for g in thrice].count("a") == 3 and [g.qid for g in thrice].count("c") == 3
    assert [g.qid for g in thrice].count("b") == 1 and thrice[:3] == train
    assert weighted(train, "people", 1) == train


def test_wikitablequestions_rows_can_be_read_as_index_sync_writes_a_table():
    header, rows = ["Year", "Team"], [["2004", "Rochester"], ["2005", "Bend"]]
    ((text, held),) = passages("Seasons", header, rows, records=False)
    assert text == "Seasons\nYear | Team\n2004 | Rochester\n2005 | Bend" and held == [0, 1]
    ((text, _),) = passages("Seasons", header, rows)
    assert text == "Seasons\nYear: 2004 | Team: Rochester\nYear: 2005 | Team: Bend"


def _linear(weights):
    n = len(weights)
    return Linear(list(weights), 0.0, [0.0] * n, [1.0] * n)


def test_a_ranker_round_trips_and_refuses_other_features(tmp_path):
    ranker = Ranker(
        _linear(range(len(FEATURES))), _linear([1.0] * len(POLAR_FEATURES)), 0.6, 0.7, {}
    )
    again = Ranker.from_json(json.loads(json.dumps(ranker.to_json())))
    assert again == ranker
    data = ranker.to_json()
    data["features"] = data["features"][:-1]
    with pytest.raises(Exception, match="fitted on other features"):
        Ranker.from_json(data)
    assert ranker_path(tmp_path / "r.safetensors").name == "r.ranker.json"


def test_the_fit_learns_which_candidates_are_right_and_sets_the_threshold_for_precision():
    rng = np.random.default_rng(3)
    examples = []
    for n in range(200):  # the right candidate has the larger answer_probability feature
        rows = rng.normal(size=(4, len(FEATURES))).tolist()
        right = [0, 0, 0, 0]
        k = int(rng.integers(4))
        rows[k][0] += 3.0
        right[k] = int(rng.random() < 0.9)
        examples.append(Example(f"q{n}", f"file{n % 20}", False, rows, right))
    for n in range(40):
        yes = n % 2
        row = [2.0 if yes else -2.0] + [0.0] * (len(POLAR_FEATURES) - 1)
        examples.append(Example(f"p{n}", f"file{n % 20}", True, [row], [yes]))
    ranker = fit_ranker(examples, 0.85, report=lambda _: None)
    top = [0.0] * len(FEATURES)
    top[0] = 3.0
    low = [0.0] * len(FEATURES)
    assert ranker.right([top, low])[0] > ranker.right([top, low])[1]
    assert ranker.yes([2.0] + [0.0] * 4) > 0.5 > ranker.yes([-2.0] + [0.0] * 4)
    assert 0.0 < ranker.threshold < 1.0 and 0.5 <= ranker.polar_threshold < 1.0


def test_threshold_and_rightness():
    assert threshold_for([(0.9, 1), (0.8, 1), (0.7, 0), (0.6, 1), (0.5, 0)], 0.75) == 0.6
    assert threshold_for([(0.9, 0)], 0.85) == 1.0
    assert is_right("Ada Quill", ["ada quill"]) and not is_right("Quill", ["Ada Quill"])
    long = "The first frobnicator was written by Ada Quill in 1987 at the Lindholm laboratory"
    assert not is_right(long, ["Ada Quill"])  # a sentence holding the answer is not it


def test_the_ranker_not_the_rule_order_picks_the_answer_and_gives_its_confidence(folder_index):
    """A ranker that prefers the reader's lower-ranked spans answers with one of them, not
    with the reader's best, and its probability is the answer's confidence."""
    from ragteam.reader import load_reader
    from ragteam.reader.stage import Rules, answer_by_reading, proposals, reading_for
    from ragteam.retrieval import load_index
    from ragteam.trace import Trace

    index = load_index(folder_index({"frob.md": MANUAL}))
    question = "Who wrote the first frobnicator, and when?"
    found = index.retrieve(question, k=5)
    shipped = load_reader()
    reading, read = reading_for(question, found, Trace(), shipped, Rules())
    candidates = proposals(question, reading, read, Rules(), None)
    assert len(candidates) >= 2 and all(c.sources == {"reader"} for c in candidates)
    weights = [0.0] * len(FEATURES)
    weights[FEATURES.index("reader_rank")] = 5.0  # the later the better
    ranker = Ranker(_linear(weights), _linear([0.0] * len(POLAR_FEATURES)), 0.5, 0.9, {})
    reader = replace_ranker(shipped, ranker)
    said = answer_by_reading(question, found, Trace(), "read", reader, Rules())
    best = answer_by_reading(question, found, Trace(), "read", shipped, Rules())
    assert said is not None and best is not None and said.text != best.text
    assert said.text in [c.span.text for c in candidates[1:]]
    texts, order = {p.id: p.text for p in read}, {p.id: n for n, p in enumerate(read)}
    rows = [features(question, reading, c, texts, order) for c in candidates]
    if said.evidence[0].answerable:  # the ranker's probability is the answer's confidence
        assert said.evidence[0].score == pytest.approx(float(max(ranker.right(rows))))


def replace_ranker(reader, ranker):
    from ragteam.reader.read import Reader

    return Reader(reader.net, reader.meta, reader.digest, reader.calibration, ranker)


def test_a_reader_without_a_ranker_keeps_the_rules_order(folder_index):
    from ragteam.reader import load_reader
    from ragteam.reader.stage import Rules, answer_by_reading
    from ragteam.retrieval import load_index
    from ragteam.trace import Trace

    index = load_index(folder_index({"frob.md": MANUAL}))
    found = index.retrieve("Who wrote the first frobnicator?", k=5)
    reader = replace_ranker(load_reader(), None)
    trace = Trace()
    said = answer_by_reading(
        "Who wrote the first frobnicator?", found, trace, "read", reader, Rules()
    )
    assert said is not None and "Ada Quill" in said.text
    assert not [s for s in trace.steps if "ranker" in str(s.output)]


def test_bad_questions_and_a_table_of_2000_rows_get_an_answer_or_not_found_quickly(folder_index):
    """Issue 86's bad input: a one-word question, one in another language, a 5,000-character
    one, over a table of 2,000 rows: an answer (or none) in a few seconds, never a crash."""
    import time

    from ragteam import answer
    from ragteam.retrieval import load_index

    rows = "\n".join(f"| host{n:04d} | {1000 + n} | rack {n % 40} |" for n in range(2000))
    table = f"# Hosts\n\n| Host | Port | Place |\n|---|---|---|\n{rows}\n"
    index = load_index(folder_index({"hosts.md": table, "frob.md": MANUAL}))
    asked = [
        "port",
        "Quel est le port de host0042 ?",
        "What is the port of host0042? " + "please tell me " * 330,
        "What is the port of host1999?",
    ]
    answer("warm up: the reader loads once", index=index)
    for question in asked:
        started = time.perf_counter()
        said = answer(question[:5000], index=index)
        assert time.perf_counter() - started < 5, question[:40]
        # words of the table or nothing: a question about its hosts is read from it
        assert not said.text or said.evidence[0].passage_id.startswith("hosts.md"), said.text
