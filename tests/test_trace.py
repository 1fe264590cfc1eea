import json
import threading

import pytest

from ragteam.trace import Step, Trace


def test_totals_and_json_round_trip():
    trace = Trace()
    trace.add(Step("retrieve", "retriever", {"query": "q", "k": 2}, [{"id": "a"}], seconds=0.5))
    trace.add(
        Step(
            "llm",
            "answerer",
            [],
            "x",
            prompt_tokens=10,
            completion_tokens=2,
            seconds=1.0,
            cached=True,
        )
    )
    trace.add(
        Step(
            "llm",
            "planner",
            [],
            "bad",
            prompt_tokens=5,
            completion_tokens=1,
            parse_failures=1,
            error="not JSON",
        )
    )
    trace.note("budget", "question cut")
    trace.add(Step("read", "reader", {"question": "q"}, {"spans": []}, prompt_tokens=300))
    totals = trace.totals()
    assert totals == {
        "llm_calls": 2,
        "retrieval_calls": 1,
        "tool_calls": 0,
        "prompt_tokens": 15,  # the models' prompts only: the reader's tokens stand apart
        "completion_tokens": 3,
        "read_tokens": 300,
        "seconds": 1.5,
        "llm_seconds": 1.0,
        "cache_hits": 1,
        "parse_failures": 1,
        "errors": 1,
    }
    data = json.loads(trace.to_json())
    again = Trace.from_dict(data)
    assert [s.role for s in again.steps] == ["retriever", "answerer", "planner", "budget", "reader"]
    assert again.totals() == totals


def test_concurrent_appends_keep_every_step():
    trace = Trace()

    def work():
        for _ in range(200):
            trace.add(Step("tool", "t", None, None))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(trace.steps) == 800


def test_steps_stream_as_they_happen_complete_and_a_listener_can_stop_the_work(bm25_index_dir):
    from ragteam.asking.api import answer
    from ragteam.errors import ParseError
    from ragteam.llm import FakeModel
    from ragteam.llm.calls import complete_json

    seen = []

    def listen(step):
        # a complete step: a failed parse is already marked when the listener sees it
        seen.append((step.kind, step.role, step.parse_failures, step.error is not None))

    trace = Trace(on_step=listen)
    bad = FakeModel(["not json at all", "still not json"])
    with pytest.raises(ParseError):
        complete_json(bad, trace, "planner", [{"role": "user", "content": "x"}], {"type": "object"})
    assert seen == [("llm", "planner", 1, True)] * 2
    seen.clear()
    result = answer(
        "Where?", index=bm25_index_dir, strategy="oner", model=FakeModel(["Hevik"]), on_step=listen
    )
    assert seen == [(s.kind, s.role, 0, False) for s in result.trace.steps]
    assert [k for k, *_ in seen] == ["retrieve", "llm", "support"]

    class Gone(Exception):
        pass

    def hang_up(step):
        if step.kind == "llm":
            raise Gone

    quiet = FakeModel(["Hevik"] * 3)
    with pytest.raises(Gone):
        answer("Where?", index=bm25_index_dir, strategy="oner", model=quiet, on_step=hang_up)
    assert len(quiet.calls) == 1  # nothing after the step where the listener stopped it
