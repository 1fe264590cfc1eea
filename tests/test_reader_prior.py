"""The passage prior: the reader's probability weighed against the passage's place in the order
read, fitted by maximum likelihood (`ragteam.reader.training.prior`), read from the weights'
calibration file and applied to `read`'s reading."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from ragteam.errors import InputError, RagteamError
from ragteam.reader.prior import PassagePrior
from ragteam.reader.spans import Reading
from ragteam.reader.training.data import fold_of
from ragteam.reader.training.prior import Spans, cross_validated, fit_prior, picked_right
from ragteam.types import Passage, Span


def _span(passage: str, text: str, score: float) -> Span:
    return Span(passage, 0, len(text), text, text, 0, score)


def test_a_later_passage_comes_first_only_where_the_reader_is_far_surer_of_it():
    reading = Reading(
        (_span("b", "1987", 0.6), _span("b", "in 1987", 0.2), _span("a", "1986", 0.1)), 0.1
    )
    order = {"a": 0, "b": 1}
    steep = PassagePrior(0.2, 1.0).ordered(reading, order)
    assert [s.text for s in steep.spans] == ["1986", "1987", "in 1987"]  # b's own order kept
    assert [s.score for s in steep.spans] == [0.1, 0.6, 0.2]  # the probabilities unchanged
    flat = PassagePrior(1.0, 0.5).ordered(reading, order)  # 0.6 * e^-0.5 > 0.1
    assert [s.text for s in flat.spans] == ["1987", "in 1987", "1986"]
    unknown = PassagePrior(0.2, 1.0).ordered(reading, {"b": 0})  # "a" not in the order: last
    assert unknown.spans[-1].text == "1986"


@pytest.mark.parametrize(
    "data",
    [
        {"score_power": 0.0, "rank_cost": 1.0},
        {"rank_cost": 1.0},
        {"score_power": "x", "rank_cost": 1},
    ],
)
def test_a_malformed_prior_is_refused(data):
    with pytest.raises(InputError):
        PassagePrior.from_json(data)


def test_a_calibration_file_with_a_malformed_prior_names_the_file(tmp_path):
    from ragteam.reader.read import Calibration

    path = tmp_path / "reader-minilm.calibration.json"
    path.write_text(json.dumps({"support": 0.5, "span": 0.5, "abstain": 0.5, "prior": {}}))
    with pytest.raises(RagteamError, match="reader-minilm.calibration.json"):
        Calibration.read(path)
    path.write_text(json.dumps({"support": 0.5, "span": 0.5, "abstain": 0.5}))
    assert Calibration.read(path).prior is None


def _planted(a: float, b: float, n: int, seed: int) -> list[Spans]:
    """Questions whose right span is drawn from the conditional logit of (a, b)."""
    rng = np.random.default_rng(seed)
    questions = []
    for q in range(n):
        k = int(rng.integers(3, 10))
        scores = rng.dirichlet(np.ones(k) * 0.5)
        positions = rng.integers(0, 8, size=k)
        z = a * np.log(np.maximum(scores, 1e-9)) - b * positions
        p = np.exp(z - z.max())
        right = np.zeros(k, dtype=bool)
        right[rng.choice(k, p=p / p.sum())] = True
        questions.append(Spans(f"file{q % 37}", tuple(scores), tuple(positions), tuple(right)))
    return questions


def test_the_fit_recovers_a_planted_prior_and_beats_probability_alone():
    questions = _planted(0.3, 0.7, 3000, seed=5)
    prior = fit_prior(questions)
    assert prior.score_power == pytest.approx(0.3, abs=0.08)
    assert prior.rank_cost == pytest.approx(0.7, abs=0.1)
    with_prior, alone = cross_validated(questions)
    assert with_prior > alone + 100
    assert picked_right(prior, questions) > picked_right(None, questions)


def test_where_the_order_says_nothing_the_fit_gives_it_no_weight():
    prior = fit_prior(_planted(1.0, 0.0, 3000, seed=7))
    assert prior.score_power == pytest.approx(1.0, abs=0.15) and abs(prior.rank_cost) < 0.08


def test_questions_all_right_or_all_wrong_say_nothing_and_one_file_is_one_fold():
    said = [Spans("f", (0.5, 0.5), (0, 1), (True, True)), Spans("g", (0.9,), (0,), (False,))]
    with pytest.raises(InputError, match="nothing to fit"):
        fit_prior(said)
    assert len({fold_of("people-abc", 10) for _ in range(3)}) == 1
    assert {fold_of(f"people-{n}", 10) for n in range(200)} == set(range(10))


def test_read_answers_from_the_first_passage_under_a_steep_prior_and_notes_it():
    """The same reading answered by the shipped reader without a prior, with a flat one (the
    same answer, no note) and with a steep one (the first passage's span, and a trace step
    saying so)."""
    from ragteam.reader import load_reader
    from ragteam.reader.read import Reader
    from ragteam.reader.stage import Rules, answer_by_reading
    from ragteam.trace import Trace

    passages = [
        Passage("a#0", "Later", "The second frobnicator was written by Bo Lind in 1990."),
        Passage("b#0", "History", "The first frobnicator was written by Ada Quill in 1987."),
    ]
    question = "Who wrote the first frobnicator?"
    shipped = load_reader()

    def with_prior(prior: PassagePrior | None) -> Reader:
        calibration = replace(shipped.calibration, prior=prior)
        return Reader(shipped.net, shipped.meta, shipped.digest, calibration)

    plain = answer_by_reading(question, passages, Trace(), "read", with_prior(None), Rules())
    assert plain is not None and "Ada Quill" in plain.text
    flat_trace = Trace()
    flat = answer_by_reading(
        question, passages, flat_trace, "read", with_prior(PassagePrior(1.0, 0.0)), Rules()
    )
    assert flat is not None and flat.text == plain.text
    assert not [s for s in flat_trace.steps if s.meta.get("event") == "prior"]  # it changed nothing
    trace = Trace()
    steep = answer_by_reading(
        question, passages, trace, "read", with_prior(PassagePrior(0.1, 5.0)), Rules()
    )
    assert steep is not None and steep.evidence[0].passage_id == "a#0"
    noted = [s for s in trace.steps if s.meta.get("event") == "prior"]
    assert len(noted) == 1 and noted[0].meta["rank_cost"] == 5.0


class _NoFirst:
    """A reader whose reading ranks its "no" outcome above every span (control flow only:
    the shipped reader ranks its outcomes among its spans the same way, `read._decode`)."""

    identity = "scripted"
    calibration = type("C", (), {"abstain": 0.5, "prior": None})()
    ranker = None
    decider_path = None

    def read(self, question, passages, top=5, key_lines=False, skip_echoes=False):  # noqa: ANN001, ANN201
        text = passages[0].text
        no = Span(passages[0].id, 0, len(text), text, text, 0, 0.7, "no")
        at = text.index("UDP")
        span = Span(passages[0].id, at, at + 3, "UDP", text, 0, 0.2)
        return Reading((no, span), 0.1, outcomes=(no,))

    def confidence(self, reading, span, passages):  # noqa: ANN001, ANN201
        return 0.5


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("Which protocol does the server listen on?", "UDP"),  # not yes/no: a span
        ("Is port 445 TCP or UDP?", "UDP"),  # a choice between two: a span
        ("Does the server listen on TCP?", "yes/no"),  # yes/no: answered yes or no
    ],
)
def test_the_reader_s_yes_and_no_answer_only_a_yes_no_question(question, said):
    from ragteam.reader.stage import Rules, answer_by_reading
    from ragteam.trace import Trace

    passages = [Passage("a#0", "Ports", "The server listens on UDP port 445 only.")]
    answered = answer_by_reading(question, passages, Trace(), "read", _NoFirst(), Rules())
    assert answered is not None and answered.text in said.split("/")
