"""The reader's confidence in a span (`ragteam.reader.confidence`): what it reads of a reading,
its fit (a logistic regression whose out-of-fold ranking is what it is chosen by), and the
calibration file that ships it: a model fitted on other features is a clear error naming the
file, and a file from before the model scores a span by its words' probability, as it did.
And `read`'s second search, with the spans of its first reading (`hops`)."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest

from ragteam.common.linear import fit_logistic, sigmoid
from ragteam.common.metrics import auroc
from ragteam.errors import InputError
from ragteam.reader import Reading, Span, default_weights, load_reader
from ragteam.reader.confidence import FEATURES, span_features
from ragteam.reader.read import calibration_path
from ragteam.reader.training.calibrate import HeldReading, fit_confidence
from ragteam.types import Passage


def _span(pid: str, text: str, score: float) -> Span:
    return Span(pid, 0, len(text), text, text + ".", 0, score)


def test_span_features_sum_the_same_words_and_count_their_passages():
    spans = (_span("p2", "Emrik Tollan", 0.5), _span("p3", "emrik tollan", 0.2))
    spans += (_span("p1", "Ana Lind", 0.1), _span("p1", "Lind", 0.05))
    reading = Reading(spans, no_answer=0.05)
    features = span_features(reading, spans[0], {"p1": 0, "p2": 1, "p3": 2})
    got = dict(zip(FEATURES, features, strict=True))
    assert got["answer_probability"] == pytest.approx(math.log(0.7 / 0.3))
    assert got["no_answer"] == pytest.approx(math.log(0.05 / 0.95))
    assert got["margin"] == pytest.approx(0.7 - 0.1)  # the next different answer: "Ana Lind"
    assert got["passages_agreeing"] == 2.0
    assert got["passage_rank"] == 1.0
    # a passage the order does not know is ranked after every passage it knows
    assert span_features(reading, spans[0], {"p1": 0})[-1] == 1.0


def test_fit_logistic_leans_on_the_column_that_separates():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 2)) * [1.0, 50.0]  # standardised: the scale does not matter
    y = (x[:, 0] + 0.3 * rng.normal(size=400) > 0).astype(float)
    model = fit_logistic(x, y, 1.0)
    assert auroc(sigmoid(model(x)).tolist(), y.astype(int).tolist()) > 0.9
    assert abs(model.weights[0]) > 5 * abs(model.weights[1])


def _asked(n: int, seed: int) -> list[HeldReading]:
    """Answers over passages that hold an answer two times in three: there, the words'
    probability tells right from wrong; where they hold none, the reader is as sure of its
    (wrong) span as of a right one, and only the margin tells."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        has = bool(rng.random() < 2 / 3)
        right = has and bool(rng.random() < 0.6)
        p = float(np.clip((0.4 if has and not right else 0.7) + 0.15 * rng.normal(), 0.01, 0.99))
        margin = (0.6 if has else 0.1) + 0.1 * float(rng.normal())
        features = [math.log(p / (1 - p)), -3.0, margin, 1.0, float(i % 5)]
        out.append(HeldReading(features, p, 0.01, right, has, f"file{i % 20}"))
    return out


def test_the_confidence_keeps_the_words_ranking_and_adds_whether_an_answer_is_there():
    asked = _asked(600, 1)
    model, out_of_fold, fitted = fit_confidence(asked)
    right = [int(a.right) for a in asked]
    assert len(out_of_fold) == len(asked)
    assert fitted["confidence_auroc_out_of_fold"] == pytest.approx(
        auroc(out_of_fold, right), abs=1e-4
    )
    # the words' probability alone cannot tell an answer the passages do not hold...
    assert fitted["confidence_auroc_out_of_fold"] > fitted["probability_auroc"] + 0.05
    # ...and among those they hold, the confidence ranks as well as it does
    assert fitted["confidence_auroc_out_of_fold_answerable"] >= (
        fitted["probability_auroc_answerable"] - 0.02
    )
    assert model.right.features == ("answer_probability",)
    fresh = _asked(300, 2)  # and it ranks answers it was not fitted on
    scores = model.probabilities(np.asarray([a.features for a in fresh])).tolist()
    probabilities = [a.probability for a in fresh]
    labels = [int(a.right) for a in fresh]
    assert auroc(scores, labels) > auroc(probabilities, labels) + 0.05


def _copy(tmp_path):
    target = tmp_path / "r.safetensors"
    shutil.copy(default_weights(), target)
    shutil.copy(calibration_path(default_weights()), calibration_path(target))
    return target


def test_the_shipped_reader_scores_spans_by_its_confidence_model():
    reader = load_reader()
    assert reader.calibration.confidence is not None
    passages = [Passage("a", "", "The Wrenhold Lighthouse was built by Emrik Tollan in 1871.")]
    reading = reader.read("Who built the Wrenhold Lighthouse?", passages, top=8)
    assert reading.best is not None
    confidence = reader.confidence(reading, reading.best, passages)
    assert 0.0 < confidence < 1.0
    assert confidence != pytest.approx(reading.answer_score(reading.best.text))


def test_a_calibration_from_before_the_model_scores_by_the_words_probability(tmp_path):
    target = _copy(tmp_path)
    path = calibration_path(target)
    data = json.loads(path.read_text())
    del data["confidence"]
    path.write_text(json.dumps(data))
    reader = load_reader(target)
    assert reader.calibration.confidence is None
    passages = [Passage("a", "", "The ferry to Hevik leaves from pier two every morning.")]
    reading = reader.read("Where does the ferry to Hevik leave from?", passages, top=8)
    assert reading.best is not None
    said = reading.answer_score(reading.best.text)
    assert reader.confidence(reading, reading.best, passages) == said


@pytest.mark.parametrize(
    "spoil",
    [
        lambda m: m["answerable"].update(features=["answer_odds"]),  # another version's
        lambda m: m["answerable"]["linear"].update(weights=[1.0]),  # weights, features disagree
        lambda m: m.pop("right"),  # truncated
    ],
)
def test_a_foreign_or_broken_confidence_model_is_an_error_naming_the_file(tmp_path, spoil):
    target = _copy(tmp_path)
    path = calibration_path(target)
    data = json.loads(path.read_text())
    spoil(data["confidence"])
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=path.name):
        load_reader(target)


TWO_HOP = [
    ("f1", "Zorvath (film)", "Zorvath is a 1987 film directed by Mirela Kostan."),
    ("f2", "Mirela Kostan", "Mirela Kostan grew up in Pellavik, a fishing port."),
    ("f3", "Orlen", "Orlen is a town on the island of Quillan, born of a fishing village."),
    ("f4", "Hevik", "Hevik is a town whose harbour was built in 1901."),
    ("f5", "Tallis", "Tallis was a mill in the town of Vossen and moved to Orlen."),
]


def test_read_with_two_hops_searches_again_with_the_spans_it_read(tmp_path):
    """`read --opt hops=2`: a second search with the question and each span read in the first
    round brings the passage about the bridge (the director) that the question never names."""
    from ragteam import answer
    from ragteam.retrieval import build_index

    corpus = tmp_path / "c.jsonl"
    rows = [{"id": i, "title": t, "text": x} for i, t, x in TWO_HOP]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
    build_index(corpus, tmp_path / "ix", retriever="bm25")
    question = "Where was the director of Zorvath born?"
    ids = {}
    for hops in (1, 2):
        options = {"k": 2, "hops": hops}
        result = answer(question, index=tmp_path / "ix", strategy="read", options=options)
        searches = [s for s in result.trace.steps if s.kind == "retrieve"]
        assert len(searches) in ((1,) if hops == 1 else (2, 3))  # one per bridge after the first
        assert all(s.input["query"].startswith(question) for s in searches)
        assert all(len(s.input["query"]) > len(question) for s in searches[1:])
        reads = [s for s in result.trace.steps if s.kind == "read"]
        ids[hops] = reads[-1].input["passages"]  # what the answer was read over
        assert len(ids[hops]) == len(set(ids[hops])) <= 2 * hops  # at most k new per round
    assert ids[1][0] == "f1" and "f2" not in ids[1]  # it shares no word with the question
    assert ids[2][:2] == ids[1] and "f2" in ids[2], ids


def test_read_with_other_weights_is_labelled_on_their_own_calibration(tmp_path):
    """The reader is part of the answer's context: `read --opt weights=X` with the reader
    support layer judges X's span on X's calibration (it was judged on the shipped one's)."""
    from ragteam import answer
    from ragteam.retrieval import build_index

    corpus = tmp_path / "c.jsonl"
    rows = [{"id": i, "title": t, "text": x} for i, t, x in TWO_HOP]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
    build_index(corpus, tmp_path / "ix", retriever="bm25")
    labelled = {}
    for name, span in (("lenient", 1e-6), ("strict", 1 - 1e-6)):
        (tmp_path / name).mkdir()
        target = _copy(tmp_path / name)
        path = calibration_path(target)
        data = json.loads(path.read_text())
        path.write_text(json.dumps({**data, "span": span}))
        result = answer(
            "Who directed Zorvath?",
            index=tmp_path / "ix",
            strategy="read",
            options={"weights": str(target), "hops": 1},
            support="reader",
        )
        assert result.evidence and result.support is not None
        labelled[name] = [c.passage_id for c in result.citations]
        reads = [s for s in result.trace.steps if s.kind == "read"]
        assert reads and all(s.meta["reader"] == result.support.extra["reader"] for s in reads)
    assert labelled == {"lenient": [result.evidence[0].passage_id], "strict": []}


def test_an_answer_s_readers_load_each_weights_once_and_keep_outputs_to_the_answer(tmp_path):
    from ragteam.reader.answer import Readers

    target = _copy(tmp_path)
    one, other = Readers(), Readers()
    first = one.get(target)
    assert one.get(str(target)) is first and one.answer() is first
    assert one.get() is not first  # the shipped weights: another reader of the same answer
    assert one.answer() is first  # the first asked for reads the answer
    again = other.get(target)
    assert again is not first and again.net is first.net  # the network loaded once
    passages = [Passage("a", "", "The ferry to Hevik leaves from pier two every morning.")]
    first.read("Where does the ferry leave from?", passages)
    assert first._kept and not again._kept  # noqa: SLF001 - no answer's leak
