"""`smart mode=auto`: the shipped trained agent on the embedded model, the modular version on
any other model, a trajectory role model when one is given, and a visible fallback when the
adapter is missing. The last test runs the shipped adapter on the real embedded model."""

from __future__ import annotations

import pytest
from test_smart import scripted as modular_script
from test_smart import truthful_locator
from test_smart_trajectory import QUESTION
from test_smart_trajectory import scripted as trajectory_script

from ragteam.asking.api import answer
from ragteam.llm import FakeModel
from ragteam.smart import agent as smart_agent
from ragteam.smart.format import parse_locator, parse_retrieval


def _mode(result):
    [note] = [s.meta for s in result.trace.steps if s.meta.get("event") == "mode"]
    return note


def test_auto_runs_the_modular_agents_on_another_model(bm25_index_dir):
    model = modular_script(
        reconstructor={"intents": ["Wrenhold Lighthouse"]},
        locator=truthful_locator,
        generator={"answer": "Hevik", "citations": [1]},
    )
    result = answer(QUESTION, index=bm25_index_dir, strategy="smart", model=model)
    note = _mode(result)
    assert note["mode"] == "modular" and note["adapter"] == ""
    assert result.text == "Hevik"


def test_auto_plays_a_trajectory_role_model(bm25_index_dir):
    result = answer(
        QUESTION,
        index=bm25_index_dir,
        strategy="smart",
        model=FakeModel(lambda m, p: "unused"),
        role_models={"trajectory": trajectory_script()},
    )
    assert _mode(result)["mode"] == "trajectory" and result.text == "Hevik"


def test_a_missing_adapter_falls_back_to_modular_and_says_so(bm25_index_dir, monkeypatch):
    monkeypatch.setattr(smart_agent, "_is_embedded_base", lambda model: True)
    monkeypatch.setattr(smart_agent, "shipped_adapter", lambda: None)
    model = modular_script(
        reconstructor={"intents": ["Wrenhold Lighthouse"]},
        locator=truthful_locator,
        generator={"answer": "Hevik", "citations": [1]},
    )
    result = answer(QUESTION, index=bm25_index_dir, strategy="smart", model=model)
    note = [s for s in result.trace.steps if s.meta.get("event") == "mode"][0]
    assert note.meta["mode"] == "modular" and "missing" in note.output


def test_modes_can_be_forced(bm25_index_dir):
    result = answer(
        QUESTION,
        index=bm25_index_dir,
        strategy="smart",
        model=trajectory_script(),
        options={"mode": "trajectory"},
    )
    assert _mode(result)["mode"] == "trajectory"


@pytest.mark.integration
def test_the_shipped_agent_answers_on_the_embedded_model(bm25_index_dir):
    adapter = smart_agent.shipped_adapter()
    assert adapter is not None and adapter.stat().st_size < 25_000_000
    result = answer(QUESTION, index=bm25_index_dir, strategy="smart")
    note = _mode(result)
    assert note["mode"] == "trajectory" and note["adapter"] == adapter.name
    roles = [s.role for s in result.trace.steps if s.kind == "llm"]
    assert roles == ["reconstructor", "locator", "generator"]
    assert result.text.strip()
    # the trained agent is a different model from the base: never the base's cache entries
    llm_steps = [s for s in result.trace.steps if s.kind == "llm"]
    assert all(s.meta.get("mode") == "trajectory" for s in llm_steps)


@pytest.mark.integration
def test_a_locator_bias_makes_the_real_locator_judge_more_passages_relevant(bm25_index_dir):
    """llama.cpp applies the bias: a large one (4: past 3.5 every held-out judgement read
    teacher-forced turned relevant, bench/locator_margin.py) turns judgements to "[Relevant]"."""

    def judged(bias: float) -> list[bool]:
        result = answer(
            QUESTION, index=bm25_index_dir, strategy="smart", options={"locator_bias": bias}
        )
        [step] = [s for s in result.trace.steps if s.role == "locator"]
        return [
            line.startswith("[Relevant]") for line in step.output.splitlines() if "]: [" in line
        ]

    plain, forced = judged(0.0), judged(4.0)
    assert len(forced) == len(plain) and sum(forced) > sum(plain)


@pytest.mark.integration
def test_the_real_locator_under_its_grammar_writes_only_copied_facts(bm25_index_dir):
    result = answer(
        QUESTION, index=bm25_index_dir, strategy="smart", options={"locator_grammar": True}
    )
    [step] = [s for s in result.trace.steps if s.role == "locator"]
    assert step.meta["grammar"] == "locator" and step.parse_failures == 0
    shown = parse_retrieval(step.input[0]["content"])
    judged = parse_locator(step.output)
    assert [j.index for j in judged] == list(range(1, len(shown) + 1))
    for j in judged:
        lines = j.fact.splitlines()
        assert all(line in " ".join(shown[j.index - 1][1].split()) for line in lines)
