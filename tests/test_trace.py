import json
import threading

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
    totals = trace.totals()
    assert totals == {
        "llm_calls": 2,
        "retrieval_calls": 1,
        "tool_calls": 0,
        "prompt_tokens": 15,
        "completion_tokens": 3,
        "seconds": 1.5,
        "llm_seconds": 1.0,
        "cache_hits": 1,
        "parse_failures": 1,
        "errors": 1,
    }
    data = json.loads(trace.to_json())
    again = Trace.from_dict(data)
    assert [s.role for s in again.steps] == ["retriever", "answerer", "planner", "budget"]
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
