"""Metric functions on hand cases, and against the AQA authors' logged scores."""

import statistics
from pathlib import Path

import pytest

from ragteam.common import metrics as m
from ragteam.eval.datasets import read_aqa_log

AQA = Path(__file__).resolve().parent / "data" / "aqa"


@pytest.mark.parametrize(
    ("text", "norm"),
    [
        ("The  Eiffel Tower!", "eiffel tower"),
        ("an apple, a pear", "apple pear"),
        ("Théâtre du Châtelet", "théâtre du châtelet"),
        ("anthem", "anthem"),
        ("", ""),
    ],
)
def test_normalize(text, norm):
    assert m.normalize_answer(text) == norm


def test_em_and_f1_take_the_best_gold():
    golds = ["Chief of Protocol", "protocol chief"]
    assert m.exact_match("chief of protocol.", golds) == 1.0
    assert m.exact_match("Chief", golds) == 0.0
    assert m.f1_score("the Chief", golds[:1]) == pytest.approx(0.5)
    assert m.f1_score("the Chief", golds) == pytest.approx(2 / 3)  # best of the two
    assert m.f1_score("protocol chief", golds) == 1.0


def test_empty_prediction_and_golds():
    assert m.f1_score("", ["x"]) == 0.0 and m.exact_match("", ["x"]) == 0.0
    assert m.f1_score("x", []) == 0.0 and m.match("x", []) == 0.0
    assert m.f1_score("the", ["a"]) == 0.0  # both normalize to nothing


def test_match_is_whole_token_containment():
    assert m.match("It was built by Tomas Reddick in 1784.", ["tomas reddick"]) == 1.0
    assert m.match("Reddickson", ["Reddick"]) == 0.0
    assert m.match("1784", ["1784", "seventeen"]) == 1.0


def test_choice_accuracy():
    choices = {"A": "Paris", "B": "Rome"}
    assert m.choice_accuracy("A", "A", choices) == 1.0
    assert m.choice_accuracy("a) Paris", "A", choices) == 1.0
    assert m.choice_accuracy("Paris", "A", choices) == 1.0
    assert m.choice_accuracy("B", "A", choices) == 0.0
    assert m.choice_accuracy("true", "true") == 1.0 and m.choice_accuracy("false", "true") == 0.0


def test_citation_and_retrieval_scores():
    assert m.citation_scores(["a", "b"], ["b", "c"]) == {
        "citation_precision": 0.5,
        "citation_recall": 0.5,
    }
    assert m.citation_scores([], ["a"])["citation_precision"] == 0.0
    assert m.retrieval_recall(["a", "b", "c"], ["a", "c"]) == {
        "retrieval_all": 1.0,
        "retrieval_fraction": 1.0,
    }
    assert m.retrieval_recall(["a"], ["a", "c"]) == {
        "retrieval_all": 0.0,
        "retrieval_fraction": 0.5,
    }


def test_metrics_give_back_every_logged_aqa_score():
    records = read_aqa_log(AQA / "train_aware_210_51_complete.jsonl")
    records += read_aqa_log(AQA / "test_aware_210_51_complete.jsonl")
    assert len(records) == 261
    for r in records:
        for agent in r.agents.values():
            assert m.f1_score(agent.prediction, r.answers) == pytest.approx(agent.f1, abs=5e-4)
            assert m.exact_match(agent.prediction, r.answers) == agent.em


def test_aqa_table1_means_on_the_training_questions():
    train = read_aqa_log(AQA / "train_aware_210_51_complete.jsonl")
    assert len(train) == 210
    means = {
        a: statistics.mean(m.f1_score(r.agents[a].prediction, r.answers) for r in train)
        for a in ("nor", "oner", "ircot")
    }
    assert means == pytest.approx({"nor": 0.347, "oner": 0.447, "ircot": 0.589}, abs=5e-4)


def test_aqa_logs_load_as_examples_typed_by_complexity():
    from ragteam.eval.datasets import load_dataset

    examples = load_dataset(AQA / "test_aware_210_51_complete.jsonl")
    assert len(examples) == 51 and {e.type for e in examples} == {"A", "B", "C"}
    assert examples[0].answers and examples[0].question


def test_any_of_evidence_counts_one_supporting_passage_as_enough():
    from ragteam.common.metrics import citation_scores, retrieval_recall

    assert retrieval_recall(["b"], ["a", "b", "c"], any_of=True)["retrieval_all"] == 1.0
    assert retrieval_recall(["b"], ["a", "b", "c"])["retrieval_all"] == 0.0
    assert retrieval_recall(["x"], ["a", "b"], any_of=True)["retrieval_fraction"] == 0.0
    assert citation_scores(["b", "x"], ["a", "b"], any_of=True)["citation_recall"] == 1.0
    assert citation_scores(["b", "x"], ["a", "b"])["citation_recall"] == 0.5


def test_label_a_is_a_label_not_an_article():
    from ragteam.common.metrics import choice_accuracy, exact_match, f1_score

    choices = {"A": "Quillan", "B": "Ostra"}
    for empty in ("", "the", "an", "a."[:0]):
        assert choice_accuracy(empty, "A", choices) == 0.0
        assert exact_match(empty, ["A"]) == 0.0
    assert choice_accuracy("A", "A", choices) == 1.0 and choice_accuracy("A: Quillan", "A") == 1.0
    assert choice_accuracy("Quillan", "A", choices) == 1.0
    assert f1_score("A", ["A"]) == 1.0 and exact_match("a", ["A"]) == 1.0
    assert exact_match("The Beatles", ["Beatles"]) == 1.0  # articles still go elsewhere
