"""Traced calls and schema-checked JSON with one repair retry (scripted model)."""

import pytest

from ragteam.errors import ParseError
from ragteam.llm import FakeModel, Request, complete_json, complete_text
from ragteam.trace import Trace

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "rating": {"type": "integer"}},
    "required": ["answer", "rating"],
}
ASK = [{"role": "user", "content": "q"}]


def test_plain_call_is_traced_with_role_and_tokens():
    trace = Trace()
    result = complete_text(FakeModel(["hello there"]), trace, "answerer", Request(ASK))
    assert result.text == "hello there"
    [step] = trace.steps
    assert (step.kind, step.role, step.output) == ("llm", "answerer", "hello there")
    assert step.input == ASK and step.completion_tokens > 0


def test_valid_json_first_time():
    trace = Trace()
    value = complete_json(FakeModel([{"answer": "x", "rating": 3}]), trace, "qa", ASK, SCHEMA)
    assert value == {"answer": "x", "rating": 3}
    assert trace.totals()["parse_failures"] == 0


def test_invalid_json_is_retried_with_the_error_shown():
    model = FakeModel(["not json at all", {"answer": "x", "rating": 1}])
    trace = Trace()
    value = complete_json(model, trace, "qa", ASK, SCHEMA)
    assert value["answer"] == "x"
    retry_prompt = model.calls[1]["messages"][-1]["content"]
    assert "not valid JSON" in retry_prompt and '"rating"' in retry_prompt
    assert model.calls[1]["messages"][-2] == {"role": "assistant", "content": "not json at all"}
    assert trace.parse_failures_by_role() == {"qa": 1}


def test_twice_invalid_raises_parse_error_naming_the_role():
    model = FakeModel(['{"answer": 1}', '{"answer": "x"}'])
    trace = Trace()
    with pytest.raises(ParseError) as info:
        complete_json(model, trace, "planner", ASK, SCHEMA)
    assert info.value.role == "planner"
    assert "planner" in str(info.value)
    assert trace.parse_failures_by_role() == {"planner": 2}
    assert all(s.error for s in trace.steps) and len(trace.steps) == 2


def test_extra_check_counts_as_a_parse_failure():
    model = FakeModel([{"answer": "x", "rating": 99}, {"answer": "x", "rating": 5}])
    check = lambda v: None if v["rating"] <= 10 else "rating must be at most 10"  # noqa: E731
    value = complete_json(model, Trace(), "qa", ASK, SCHEMA, check=check)
    assert value["rating"] == 5
    assert "at most 10" in model.calls[1]["messages"][-1]["content"]


def test_code_fences_are_tolerated():
    value = complete_json(
        FakeModel(['```json\n{"answer": "a", "rating": 2}\n```']), Trace(), "qa", ASK, SCHEMA
    )
    assert value["rating"] == 2


def test_schema_is_passed_to_the_backend():
    model = FakeModel([{"answer": "a", "rating": 2}])
    complete_json(model, Trace(), "qa", ASK, SCHEMA)
    assert model.calls[0]["json_schema"] == SCHEMA


FEW_SHOT = [
    {"role": "system", "content": "Answer from the notes."},
    {"role": "user", "content": "Notes: Wrenhold Lighthouse was built in 1786 by Emrik Tollan."},
    {"role": "assistant", "content": '{"answer": "Emrik Tollan", "rating": 9}'},
    {"role": "user", "content": "Notes: Korr Beacon was lit in 1902 by Ada Vell."},
]


def test_copying_the_worked_example_is_retried_without_the_example():
    replies = [{"answer": "Emrik Tollan", "rating": 9}, {"answer": "Ada Vell", "rating": 8}]
    model = FakeModel(replies)
    trace = Trace()
    value = complete_json(model, trace, "qa", FEW_SHOT, SCHEMA)
    assert value["answer"] == "Ada Vell"
    assert model.calls[1]["messages"] == [FEW_SHOT[0], FEW_SHOT[-1]]
    assert "copies Emrik, Tollan from the worked example" in trace.steps[0].error
    assert trace.parse_failures_by_role() == {"qa": 1}


def test_plain_text_copies_are_retried_then_refused():
    trace = Trace()
    model = FakeModel(["Emrik Tollan", "Ada Vell"])
    result = complete_text(model, trace, "answerer", Request(FEW_SHOT), grounded=True)
    assert result.text == "Ada Vell" and trace.parse_failures_by_role() == {"answerer": 1}
    stubborn = FakeModel(["Emrik Tollan", "Tollan again"])
    with pytest.raises(ParseError, match="answerer"):
        complete_text(stubborn, Trace(), "answerer", Request(FEW_SHOT), grounded=True)
    assert stubborn.calls[1]["messages"] == [FEW_SHOT[0], FEW_SHOT[-1]]


def test_names_that_the_request_itself_contains_are_not_copies():
    from ragteam.llm.calls import copied_from_examples

    reply = '{"answer": "The Lighthouse of 1786, then Korr Beacon", "rating": 3}'
    assert copied_from_examples(reply, FEW_SHOT) == ["Lighthouse", "1786"]
    real = [*FEW_SHOT[:3], {"role": "user", "content": "Notes: the lighthouse of 1786."}]
    assert copied_from_examples(reply, real) == []
    assert copied_from_examples(reply, [FEW_SHOT[0], FEW_SHOT[3]]) == []  # no examples
    model = FakeModel([{"answer": "Emrik Tollan", "rating": 9}])
    value = complete_json(model, Trace(), "direct", FEW_SHOT, SCHEMA, grounded=False)
    assert value["answer"] == "Emrik Tollan"


TEMPLATED = [
    {
        "role": "system",
        "content": 'Reply in JSON: {"analysis": "...", "answer": "short answer", '
        '"success": "yes" or "no", "rating": 0-10}.',
    },
    {"role": "user", "content": "Who built it?"},
]


def test_a_reply_repeating_the_templates_placeholder_is_retried():
    model = FakeModel(
        [{"answer": "Short answer.", "rating": 5}, {"answer": "Reddick", "rating": 5}]
    )
    trace = Trace()
    value = complete_json(model, trace, "qa", TEMPLATED, SCHEMA)
    assert value["answer"] == "Reddick"
    first, second = trace.steps
    assert first.parse_failures == 1 and "'Short answer.'" in first.error
    assert "placeholder" in model.calls[1]["messages"][-1]["content"]


def test_real_values_of_the_template_and_dots_are_not_placeholders():
    reply = {"analysis": "...", "answer": "yes", "rating": 5}
    trace = Trace()
    value = complete_json(FakeModel([reply]), trace, "qa", TEMPLATED, SCHEMA)
    assert value == reply and trace.totals()["parse_failures"] == 0


def test_only_the_system_prompts_template_names_placeholders():
    asked = [{"role": "user", "content": 'Data: {"answer": "short answer"}. What does it say?'}]
    trace = Trace()
    value = complete_json(
        FakeModel([{"answer": "short answer", "rating": 1}]), trace, "qa", asked, SCHEMA
    )
    assert value["answer"] == "short answer" and trace.totals()["parse_failures"] == 0
