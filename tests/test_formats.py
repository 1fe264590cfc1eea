"""Multiple-choice and true/false questions: posed with SMART's instructions, answered by label."""

import json

from ragteam.asking import AskRequest
from ragteam.asking.api import answer
from ragteam.asking.where import Loaded
from ragteam.eval.datasets import read_examples
from ragteam.eval.rundir import RunDir
from ragteam.eval.runner import EvalPlan, run_eval
from ragteam.formats import MULTIPLE_CHOICE, TRUE_FALSE, choice_label, pose, truth_label
from ragteam.llm import FakeModel
from ragteam.retrieval import load_index

CHOICES = {"A": "9am", "B": "12pm", "C": "12am", "D": "2pm"}


def test_pose_uses_the_zero_shot_instructions():
    text = pose("What time is it?", CHOICES)
    assert text.startswith(MULTIPLE_CHOICE) and "B: 12pm" in text
    assert pose("Pick.", {"A": "x", "B": "y"}).startswith("Given two answer candidates")
    assert pose("The sky is green.", claim=True) == f"{TRUE_FALSE}\nThe sky is green."
    assert pose("Who?") == "Who?"


def test_labels_are_read_off_replies():
    assert choice_label("B: 12pm", CHOICES) == "B"
    assert choice_label("(c) midnight", CHOICES) == "C"
    assert choice_label("12pm.", CHOICES) == "B"
    assert choice_label("no idea", CHOICES) == "no idea"
    assert truth_label("False, it is not.") == "false" and truth_label("yes") == "true"


def test_api_and_eval_answer_by_label(bm25_index_dir, tmp_path):
    model = FakeModel(lambda m, p: "B: 12pm" if "candidates" in m[-1]["content"] else "False.")
    result = answer(
        "What time is it when shadows are shortest?", strategy="nor", model=model, choices=CHOICES
    )
    assert result.text == "B" and "candidates" in model.calls[0]["messages"][-1]["content"]
    data = tmp_path / "mc.jsonl"
    data.write_text(
        json.dumps({"id": "m", "question": "Shadow shortest?", "choices": CHOICES, "label": "B"})
        + "\n"
        + json.dumps({"id": "t", "question": "Hevik is on Quillan.", "label": "false"})
        + "\n"
    )
    rows = run_eval(
        # the model's own true/false is what is read here (not the fitted verdicts')
        EvalPlan(read_examples(data), {"nor": {}}, data, asking=AskRequest(verdicts="own")),
        RunDir(tmp_path / "r"),
        Loaded(model, load_index(bm25_index_dir)),
    )
    by = {r.id: r for r in rows}
    assert by["m"].prediction == "B" and by["m"].metrics["choice_accuracy"] == 1.0
    assert by["t"].prediction == "false" and by["t"].metrics["choice_accuracy"] == 1.0


def test_an_answer_given_as_option_text_is_mapped_and_counted(bm25_index_dir):
    from ragteam.asking.api import answer
    from ragteam.llm import FakeModel

    choices = {"A": "Quillan", "B": "Hevik"}
    result = answer(
        "Where was Emrik Tollan born?",
        index=bm25_index_dir,
        strategy="nor",
        model=FakeModel(lambda m, p: "Hevik"),
        choices=choices,
    )
    assert result.text == "B" and result.applied == {"label_from_text"}  # said on the answer
    assert any(s.meta.get("event") == "label_from_text" for s in result.trace.steps)
    labelled = answer(
        "Where was Emrik Tollan born?",
        strategy="nor",
        model=FakeModel(lambda m, p: "B"),
        choices=choices,
    )
    assert labelled.text == "B" and labelled.applied == frozenset()
    assert not any(s.meta.get("event") == "label_from_text" for s in labelled.trace.steps)
