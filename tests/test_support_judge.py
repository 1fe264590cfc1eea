"""The support stage's `llm` layer: a model judges whether a passage states each answer
sentence (`ragteam.agents.judge`). Control flow on scripted replies; the real embedded model
and a real llama.cpp server on 127.0.0.1 as judges; garbage and an unreachable server leave
the lexical verdict standing, said in the trace."""

from __future__ import annotations

import json
import socket

import pytest
from test_support import QUESTION, TOLLAN

from ragteam import answer
from ragteam.llm import FakeModel
from ragteam.llm.openai_compat import OpenAICompatModel
from ragteam.strategies import check_roles
from ragteam.support.stage import check_support
from ragteam.trace import Trace
from ragteam.types import Passage, SupportSettings

# holds every word of the answer, but does not say it is where the engineer was born
DECOY = Passage("halvard-07", "Hevik", "Hevik is a fishing village. Its harbour has two piers.")
LLM = SupportSettings("llm")


def _verdicts(supported_ids: set[str]):
    """A judge's replies: it backs exactly the passages of `supported_ids` (by their titles)."""
    titles = {p.title for p in (TOLLAN, DECOY) if p.id in supported_ids}

    def reply(messages, params):
        asked = messages[-1]["content"]
        passage_title = asked.split("Passage: ", 1)[1].split(".", 1)[0]
        return json.dumps({"supported": passage_title in titles})

    return reply


def _judge_says(supported_ids: set[str]) -> FakeModel:
    return FakeModel(_verdicts(supported_ids))


def _judged(step) -> str:
    """The title of the passage a judge step was shown."""
    return step.input[-1]["content"].split("Passage: ", 1)[1].split(".", 1)[0]


class _Ctx:
    def __init__(self, model):
        self.trace = Trace()
        self.model = model

    def model_for(self, role: str):
        return self.model


def _judge(model, question=QUESTION):
    from ragteam.agents.judge import judge_with

    ctx = _Ctx(model)
    return judge_with(ctx, question), ctx.trace


def test_the_judge_cites_what_it_backs_and_not_what_only_shares_words():
    lexical = check_support(QUESTION, "Hevik", [DECOY, TOLLAN], SupportSettings("lexical"))
    assert set(lexical.cited) == {"halvard-05", "halvard-07"}  # word overlap accepts the decoy
    judge, trace = _judge(_judge_says({"halvard-05"}))
    found = check_support(QUESTION, "Hevik", [DECOY, TOLLAN], LLM, trace, judge)
    assert found.layer == "llm" and found.cited == ["halvard-05"]
    calls = {_judged(s): json.loads(s.output) for s in trace.steps if s.role == "judge"}
    assert calls == {"Hevik": {"supported": False}, "Emrik Tollan": {"supported": True}}
    assert trace.steps[-1].kind == "support" and trace.steps[-1].output["layer"] == "llm"


def test_a_judge_that_backs_nothing_makes_the_answer_not_supported():
    judge, trace = _judge(_judge_says(set()))
    found = check_support(QUESTION, "Hevik", [DECOY, TOLLAN], LLM, trace, judge)
    assert found.cited == [] and not found.sentences[0].supported and found.note == ""


def test_garbage_from_the_judge_fails_its_step_and_the_lexical_verdict_stands():
    judge, trace = _judge(FakeModel(lambda messages, params: "I think so, maybe"))
    found = check_support(QUESTION, "Hevik", [TOLLAN], LLM, trace, judge)
    assert found.layer == "llm" and found.cited == ["halvard-05"]  # lexical: every word held
    assert "no verdict on 1 pair" in found.note and "lexical verdict stands" in found.note
    failed = [s for s in trace.steps if s.role == "judge" and s.error]
    assert failed and failed[-1].parse_failures > 0
    assert trace.steps[-1].meta["note"] == found.note


def test_an_unreachable_judge_is_asked_once_and_the_lexical_verdict_stands():
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = OpenAICompatModel("judge", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
    judge, trace = _judge(server)
    asked = []

    def counted(sentence: str, passage: str) -> bool:
        asked.append(sentence)
        return judge(sentence, passage)

    found = check_support(QUESTION, "Hevik. It is on Fenna.", [DECOY, TOLLAN], LLM, trace, counted)
    assert [s.supported for s in found.sentences] == [True, True]  # lexical verdicts
    assert "from the model's failure on" in found.note and "127.0.0.1" in found.note
    assert asked == ["Hevik."]  # four pairs to judge; after the failure none was sent
    assert trace.steps[-1].meta["note"] == found.note


def test_without_a_model_the_llm_layer_says_the_lexical_layer_decided():
    trace = Trace()
    found = check_support(QUESTION, "Hevik", [TOLLAN], LLM, trace)
    assert found.layer == "lexical" and "no model to judge with" in found.note


def test_judge_is_a_role_every_strategy_accepts_and_the_answer_records_it(bm25_index_dir):
    check_roles(["oner"], ["judge"])  # no error: the judge can be put on another model
    result = answer(
        QUESTION,
        index=bm25_index_dir,
        strategy="oner",
        model=FakeModel(lambda messages, params: "So the answer is: Hevik"),
        role_models={"judge": _judge_says({"halvard-05"})},
        support="llm",
    )
    assert [c.passage_id for c in result.citations] == ["halvard-05"]
    assert result.grounding().level == "supported" and result.grounding().layer == "llm"
    assert any(s.role == "judge" for s in result.trace.steps)


@pytest.mark.integration
def test_the_embedded_model_judges_under_its_grammar(embedded_model):
    judge, trace = _judge(embedded_model)
    found = check_support(QUESTION, "Hevik", [DECOY, TOLLAN], LLM, trace, judge)
    calls = {_judged(s): json.loads(s.output) for s in trace.steps if s.role == "judge"}
    assert set(calls) == {"Hevik", "Emrik Tollan"}
    assert all(isinstance(v["supported"], bool) for v in calls.values())
    assert found.layer == "llm" and found.note == ""
    # what the stage cites is exactly what the model's verdicts backed
    ids = {"Hevik": "halvard-07", "Emrik Tollan": "halvard-05"}
    assert set(found.cited) == {ids[t] for t, v in calls.items() if v["supported"]}


@pytest.mark.integration
def test_a_served_model_judges_through_the_openai_backend(llama_server):
    model = OpenAICompatModel("smollm2", base_url=llama_server)
    judge, trace = _judge(model)
    found = check_support(QUESTION, "Hevik", [TOLLAN], LLM, trace, judge)
    calls = [json.loads(s.output) for s in trace.steps if s.role == "judge"]
    assert len(calls) == 1 and isinstance(calls[0]["supported"], bool)
    assert found.layer == "llm" and found.note == ""
    assert found.sentences[0].supported is calls[0]["supported"]


def test_the_http_answer_route_takes_the_llm_layer_and_refuses_an_unknown_one(bm25_index_dir):
    from fastapi.testclient import TestClient

    from ragteam.server.app import create_app
    from ragteam.server.config import ServerConfig

    judging = _verdicts({"halvard-05"})

    def reply(messages, params):  # the answerer says Hevik; as judge it backs Tollan's passage
        if params.get("json_schema") and "supported" in params["json_schema"]["properties"]:
            return judging(messages, params)
        return "Hevik"

    config = ServerConfig(indexes={"demo": bm25_index_dir})
    api = TestClient(create_app(config, FakeModel(reply)))
    asked = {"question": QUESTION, "index": "demo", "strategy": "oner"}
    data = api.post("/v1/answer", json={**asked, "support": "llm"}).json()
    assert data["grounding"]["layer"] == "llm" and data["grounding"]["level"] == "supported"
    assert [c["passage_id"] for c in data["citations"]] == ["halvard-05"]
    assert any(s["role"] == "judge" for s in data["trace"]["steps"])
    bad = api.post("/v1/answer", json={**asked, "support": "nli"})
    assert bad.status_code in (400, 422) and "llm" in bad.text
