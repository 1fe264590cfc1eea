"""Roles as objects: one declaration (name, prompt, reply, budget) and one way to play it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ragteam.agents import answerers, marag, smurfs
from ragteam.agents.role import Role, Solo, role_names
from ragteam.errors import ParseError, RagteamError
from ragteam.llm.fake import FakeModel
from ragteam.smart import roles as smart
from ragteam.strategies import strategy_roles
from ragteam.strategies.base import Context
from ragteam.trace import Trace

SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
}
PICK = Role(
    "picker", "### system\nPick a number.\n### user\nFrom: {numbers}", SCHEMA, 8, slots=("numbers",)
)


def test_a_json_role_retries_once_with_the_error_and_records_each_step():
    model = FakeModel(["not json", {"n": 3}])
    ctx = Context(model, None, Trace())
    assert PICK.call(ctx, numbers="1 2 3") == {"n": 3}
    steps = ctx.trace.steps
    assert [s.role for s in steps] == ["picker", "picker"] and steps[0].parse_failures == 1
    first = model.calls[0]
    assert first["messages"][1]["content"] == "From: 1 2 3" and first["max_tokens"] == 8
    assert first["json_schema"] == SCHEMA


def test_a_check_that_fails_twice_fails_the_step_visibly_under_the_role_name():
    model = FakeModel([{"n": 9}, {"n": 9}])
    with pytest.raises(ParseError, match="picker"):
        PICK.call(
            Solo(model, Trace()),
            check=lambda v: "n must be below 5" if v["n"] >= 5 else None,
            numbers="1 9",
        )


def test_the_role_model_override_plays_the_role():
    default, chosen = FakeModel([]), FakeModel([{"n": 1}])
    ctx = Context(default, None, Trace(), role_models={"picker": chosen})
    assert PICK.call(ctx, numbers="1") == {"n": 1}
    assert not default.calls and len(chosen.calls) == 1


def test_a_plain_text_role_stops_and_a_grounded_one_refuses_the_worked_example():
    trace = Trace()
    reply = answerers.ANSWERER_DIRECT.write(Solo(FakeModel(["Paris"]), trace), question="Capital?")
    assert reply.text == "Paris" and trace.steps[0].role == "answerer"
    assert reply.text == "Paris"
    # a grounded role's reply copying the worked example is retried without it, then refused
    example = "### user\nQ: Who built Gizeh Tower?\n### assistant\nHekla Ostvald\n### user\nQ: {q}"
    role = Role("answerer", example, max_tokens=8, stop=("\n",), slots=("q",))
    copier = FakeModel(lambda messages, params: "Hekla Ostvald")
    with pytest.raises(ParseError, match="answerer"):
        role.write(Solo(copier, Trace()), q="Who painted it?")
    retried = copier.calls[1]["messages"]
    assert all(m["role"] != "assistant" for m in retried) and copier.calls[0]["stop"] == ["\n"]
    with pytest.raises(TypeError, match="plain text"):
        role.call(Solo(copier, Trace()), q="Who?")


def test_a_variant_keeps_the_name_and_model_with_another_prompt():
    variant = replace(smart.GENERATOR, prompt="smart_direct", grounded=False, slots=("question",))
    assert variant == smart.GENERATOR_DIRECT and variant.name == "generator"


@pytest.mark.parametrize(
    "strategy, declared",
    [
        ("smart", smart.ROLES),
        ("marag", marag.ROLES),
        ("smurfs", smurfs.ROLES),
        ("oner", (answerers.ANSWERER,)),
        ("ircot", (answerers.REASONER, answerers.ANSWERER)),
    ],
)
def test_a_strategys_roles_are_the_roles_it_declares(strategy, declared):
    assert set(role_names(*declared)) <= set(strategy_roles(strategy))
    for role in declared:  # every prompt ships and fills
        messages = role.messages(**{slot: f"<{slot}>" for slot in role.slots})
        assert all(f"<{slot}>" in " ".join(m["content"] for m in messages) for slot in role.slots)


def test_a_role_whose_prompt_has_other_slots_is_refused_when_declared():
    with pytest.raises(RagteamError, match=r"its prompt has no \{quesiton\}.*\{question\}, not"):
        Role("asker", "nor", slots=("quesiton",))  # misspelt: the prompt's slot is {question}
    with pytest.raises(RagteamError, match=r"\{passages\}, not declared"):
        replace(answerers.ANSWERER, slots=("question",))  # a variant is checked again
    with pytest.raises(RagteamError, match=r"\{numbers\}, not declared"):
        Role("picker", "### user\nFrom: {numbers}", SCHEMA)


def test_a_call_that_misses_or_adds_a_slot_is_refused_before_the_model_is_asked():
    model = FakeModel([{"n": 1}])
    with pytest.raises(RagteamError, match=r"the call fills no \{numbers\}"):
        PICK.call(Solo(model, Trace()), number="1")  # a typo would reach the model as {numbers}
    with pytest.raises(RagteamError, match=r"the call fills \{extra\}, not declared"):
        PICK.call(Solo(model, Trace()), numbers="1", extra="2")
    assert not model.calls
