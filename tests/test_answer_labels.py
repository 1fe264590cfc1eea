"""`oner`'s label biases: fitted for one model and one answerer prompt, added to the labels'
first tokens of a true/false or multiple-choice question, never to an open one, and applied by
llama.cpp for real."""

from __future__ import annotations

import json

import pytest

from ragteam.errors import InputError
from ragteam.formats import Posed
from ragteam.llm import FakeModel, Request
from ragteam.retrieval import load_index
from ragteam.strategies import answer_labels
from ragteam.strategies.answer_labels import label_bias, template_digest
from ragteam.strategies.base import Context
from ragteam.strategies.baselines import OneR
from ragteam.trace import Trace

CLAIM = Posed("The Wrenhold Lighthouse was built by Emrik Tollan.", claim=True)
WORDS = {"true": 11, "True": 12, "false": 13, "False": 14, "A": 15}


class Labelled(FakeModel):
    """A scripted model with a vocabulary, so that biases can name its tokens."""

    def tokenize(self, text: str) -> list[int]:
        return [WORDS.get(text, 99)]


def _biases(path, model="labelled", template=None, claim=None):  # noqa: ANN001, ANN202
    path.write_text(
        json.dumps(
            {
                "model": model,
                "template": template or template_digest(),
                "biases": {"claim": claim or {"true": 2.5, "false": 0.0}},
            }
        )
    )
    return path


def test_oner_adds_the_fitted_biases_to_a_claims_labels(tmp_path, monkeypatch, bm25_index_dir):
    monkeypatch.setattr(answer_labels, "DATA_FILE", _biases(tmp_path / "labels.json"))
    model = Labelled(["True"], identity="labelled")
    ctx = Context(model, load_index(bm25_index_dir), Trace())
    OneR().run(CLAIM, ctx)
    assert model.calls[-1]["logit_bias"] == {11: 2.5, 12: 2.5}  # "true" as it may begin
    notes = [s for s in ctx.trace.steps if s.meta.get("event") == "label_bias"]
    assert notes and notes[0].meta["bias"] == {"11": 2.5, "12": 2.5}
    unbiased = Labelled(["True"], identity="labelled")
    OneR(label_biases=False).run(CLAIM, Context(unbiased, ctx.index, Trace()))
    assert "logit_bias" not in unbiased.calls[-1]  # `--opt oner.label_biases=false`
    open_question = Labelled(["Emrik Tollan"], identity="labelled")
    OneR().run(
        Posed("Who built the Wrenhold Lighthouse?"), Context(open_question, ctx.index, Trace())
    )
    assert "logit_bias" not in open_question.calls[-1]


@pytest.mark.parametrize("other", ["model", "template"])
def test_biases_fitted_for_another_model_or_prompt_are_not_applied(tmp_path, other):
    path = _biases(tmp_path / "labels.json", **{other: "something else"})
    assert label_bias(Labelled([], identity="labelled"), CLAIM, path) == {}
    assert label_bias(Labelled([], identity="labelled"), CLAIM, _biases(tmp_path / "ok.json"))


def test_a_damaged_bias_file_is_a_clear_error(tmp_path):
    path = tmp_path / "labels.json"
    path.write_text('{"model": "labelled", "biases": ')
    with pytest.raises(InputError, match="not a label bias file.*ragteam train labels answerer"):
        label_bias(Labelled([], identity="labelled"), CLAIM, path)


@pytest.mark.integration
def test_llama_cpp_applies_a_chat_requests_bias(embedded_model):
    """The bias reaches llama.cpp: a large one decides the reply's first word either way."""
    ask = [{"role": "user", "content": f"{CLAIM.text}\nAnswer true or false."}]
    said = {}
    for label in ("True", "False"):
        token = embedded_model.tokenize(label)[0]
        reply = embedded_model.complete(Request(ask, max_tokens=3, logit_bias={token: 30.0}))
        said[label] = reply.text.strip()
    assert said["True"].startswith("True") and said["False"].startswith("False")
