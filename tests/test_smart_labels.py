"""Label calibration of the trained agent: labels read from the posed question, biases loaded
only for the adapter they were fitted for, and applied by llama.cpp to the generator's answer."""

from __future__ import annotations

import json
import shutil

import pytest
from test_smart_trajectory import QUESTION, Tokenizing, scripted

from ragteam.errors import InputError
from ragteam.formats import Posed
from ragteam.llm import ModelOptions
from ragteam.llm.gguf_files import gguf_fingerprint
from ragteam.retrieval import load_index
from ragteam.smart.format import GENERATOR
from ragteam.smart.labels import (
    LabelCalibration,
    calibration_path,
    label_bias,
    load_calibration,
)
from ragteam.smart.trajectory import TrajectorySettings, run_trajectory
from ragteam.strategies.base import Context
from ragteam.trace import Trace

CHOICES = {"A": "Hevik", "B": "Oslo", "C": "Bergen", "D": "Tromsø"}


def _said(posed: Posed) -> tuple[str, list[str]]:
    return posed.format, posed.labels


def test_the_posed_question_says_its_format_and_labels():
    assert _said(Posed(QUESTION, CHOICES)) == ("multiple_choice", list("ABCD"))
    five = {**CHOICES, "E": "Narvik"}
    assert _said(Posed(QUESTION, five)) == ("multiple_choice", list("ABCDE"))
    numbered = {"1": "x", "2": "y", "3": "z"}  # a stem line shaped like an option is not one
    assert Posed("Q?\nA: not an option", numbered).labels == ["1", "2", "3"]
    assert _said(Posed("Tollan built it.", claim=True)) == ("claim", ["true", "false"])
    assert _said(Posed(QUESTION)) == ("open", [])
    # a long label (which the posed text's parse never found: one character a label)
    assert Posed(QUESTION, {"AB": "x", "CD": "y"}).labels == ["AB", "CD"]


def write_calibration(adapter, biases, fingerprint=None):
    path = calibration_path(adapter)
    data = {"adapter": fingerprint or gguf_fingerprint(adapter), "biases": biases}
    path.write_text(json.dumps(data))
    return path


def test_a_calibration_is_loaded_only_for_its_own_adapter(tmp_path):
    adapter = tmp_path / "a.gguf"
    adapter.write_bytes(b"adapter bytes")
    assert load_calibration(adapter) is None  # none beside it
    path = write_calibration(adapter, {"claim": {"true": 1.5}, "other": {"x": 1}})
    assert path.name == "a.labels.json"
    found = load_calibration(adapter)
    assert found is not None and found.biases == {"claim": {"true": 1.5}}
    write_calibration(adapter, {"claim": {"true": 1.5}}, fingerprint="1:another")
    assert load_calibration(adapter) is None  # fitted for another adapter
    path.write_text('{"adapter": "x", "biases": [1]}')
    with pytest.raises(InputError, match="not a label calibration"):
        load_calibration(adapter)


def test_biases_go_to_each_label_s_first_token_and_open_questions_get_none(tmp_path):
    calibration = LabelCalibration(
        tmp_path, "f", {"multiple_choice": {"B": -1.0, "C": 0.0}, "claim": {"true": 2.0}}
    )

    def tokenize(text):
        return [ord(c) for c in text]

    assert label_bias(tokenize, Posed(QUESTION, CHOICES), calibration) == {ord("B"): -1.0}
    assert label_bias(tokenize, Posed("x", claim=True), calibration) == {ord("t"): 2.0}
    assert label_bias(tokenize, Posed(QUESTION), calibration) == {}


def test_the_generator_call_alone_carries_the_label_biases(bm25_index_dir, tmp_path):
    script = scripted(answer_text="B")._fn

    def reply(messages, params):
        prompt = messages[0]["content"]
        if prompt.endswith(GENERATOR + "B"):
            return "\n[Cite]: [1]</eog>"
        return "B" if params["max_tokens"] == 1 else script(messages, params)

    model = Tokenizing(reply)
    calibration = LabelCalibration(tmp_path, "f", {"multiple_choice": {"B": -1.0, "D": 0.5}})
    settings = TrajectorySettings(3, 3, 6, 40, calibration=calibration)
    ctx = Context(model=model, index=load_index(bm25_index_dir), trace=Trace())
    t = run_trajectory(Posed(QUESTION, CHOICES), ctx, settings, model).trajectory
    result = t.answer, t.citations
    # the label's token alone is biased: one call of one token, then the rest unbiased
    assert [c.get("logit_bias") for c in model.calls] == [None, None, {66: -1.0, 68: 0.5}, None]
    assert model.calls[2]["max_tokens"] == 1
    assert result == ("B", [1])


@pytest.mark.integration
def test_the_real_agent_follows_a_calibration_beside_its_adapter(bm25_index_dir, tmp_path):
    """A strong bias toward "true" beside a copy of the shipped adapter turns the answer to
    "true"; without the file (or with label_calibration=false) the agent decides alone."""
    from ragteam.asking.api import answer
    from ragteam.smart.agent import shipped_adapter

    adapter = tmp_path / "agent.gguf"
    shutil.copyfile(shipped_adapter(), adapter)
    claim = "The Wrenhold Lighthouse was built by a woman from Oslo."

    def said(**options):
        result = answer(
            claim,
            index=bm25_index_dir,
            strategy="smart",
            claim=True,
            verdicts="own",  # the generator's own verdict, not the fitted verdicts'
            model_options=ModelOptions(lora=str(adapter)),
            options=options,
        )
        return result.text, [s for s in result.trace.steps if s.role == "generator"][0]

    write_calibration(adapter, {"claim": {"true": 30.0}})
    text, step = said()
    assert text == "true" and list(step.meta["first_token_bias"].values()) == [30.0]
    write_calibration(adapter, {"claim": {"false": 30.0}})
    assert said()[0] == "false"
    assert "first_token_bias" not in said(label_calibration=False)[1].meta
