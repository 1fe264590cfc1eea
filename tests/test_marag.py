"""MA-RAG's control flow on a scripted model and a real BM25 index: every branch."""

from ragteam.asking.api import answer
from ragteam.llm import FakeModel

QUESTION = "In which village was the engineer who built the Wrenhold Lighthouse born?"
ROLES = [
    ("plan how to answer", "planner"),
    ("self-contained task", "step_definer"),
    ("read one document", "extractor"),
    ("answer a task from the notes", "qa"),
    ("final answer to a question", "summary"),
]


def role_of(messages):
    return next(r for key, r in ROLES if key in messages[0]["content"])


def scripted(**handlers):
    def reply(messages, params):
        handler = handlers[role_of(messages)]
        return handler(messages) if callable(handler) else handler

    return FakeModel(reply)


def note_if(word):
    def extractor(messages):
        document = messages[-1]["content"].split("Document:", 1)[1]
        return {"note": document.strip()[:300] if word in document else ""}

    return extractor


def qa_answer(messages):
    task = messages[-1]["content"].split("\n")[0]
    answer = "Emrik Tollan" if "built" in task else "Hevik"
    return {"analysis": "a", "answer": answer, "success": "yes", "rating": 8}


def test_two_hop_plan_runs_each_step_and_summarizes(bm25_index_dir):
    model = scripted(
        planner={
            "analysis": "two hops",
            "steps": ["Who built the Wrenhold Lighthouse?", "Where was that engineer born?"],
        },
        step_definer={"type": "question-answering", "task": "Where was Emrik Tollan born?"},
        extractor=note_if("Tollan"),
        qa=qa_answer,
        summary={"output": "It was Hevik.", "answer": "Hevik", "score": 9},
    )
    result = answer(QUESTION, index=bm25_index_dir, strategy="marag", model=model, options={"k": 3})
    assert result.text == "Hevik"
    roles = [s.role for s in result.trace.steps if s.kind == "llm"]
    assert roles == [
        "planner",
        "extractor",
        "extractor",
        "extractor",
        "qa",
        "step_definer",
        "extractor",
        "extractor",
        "extractor",
        "qa",
        "summary",
    ]
    queries = [s.input["query"] for s in result.trace.steps if s.kind == "retrieve"]
    assert queries == ["Who built the Wrenhold Lighthouse?", "Where was Emrik Tollan born?"]
    definer_prompt = [c for c in model.calls if role_of(c["messages"]) == "step_definer"][0]
    assert (
        "Who built the Wrenhold Lighthouse? -> Emrik Tollan"
        in definer_prompt["messages"][-1]["content"]
    )
    summary_prompt = model.calls[-1]["messages"][-1]["content"]
    assert "Where was Emrik Tollan born? -> Hevik" in summary_prompt
    assert result.citations and all("Tollan" in c.title or c.title for c in result.citations)
    retrieved = {h["id"] for s in result.trace.steps if s.kind == "retrieve" for h in s.output}
    assert {c.passage_id for c in result.citations} <= retrieved


def test_aggregate_steps_do_not_retrieve(bm25_index_dir):
    steps = iter([{"type": "aggregate", "task": "Combine the two answers."}])
    model = scripted(
        planner={"analysis": "", "steps": ["Who built the Wrenhold Lighthouse?", "Combine."]},
        step_definer=lambda m: next(steps),
        extractor={"note": "Emrik Tollan built it."},
        qa=qa_answer,
        summary={"output": "", "answer": "Emrik Tollan", "score": 5},
    )
    result = answer(QUESTION, index=bm25_index_dir, strategy="marag", model=model, options={"k": 2})
    assert sum(s.kind == "retrieve" for s in result.trace.steps) == 1
    qa_prompts = [
        c["messages"][-1]["content"] for c in model.calls if role_of(c["messages"]) == "qa"
    ]
    assert "Who built the Wrenhold Lighthouse? -> Emrik Tollan" in qa_prompts[1]


def test_zero_steps_and_too_many_steps(bm25_index_dir):
    common = {
        "extractor": {"note": ""},
        "qa": qa_answer,
        "summary": {"output": "", "answer": "x", "score": 1},
        "step_definer": {"type": "question-answering", "task": "Who built it?"},
    }
    empty = scripted(planner={"analysis": "", "steps": []}, **common)
    result = answer(QUESTION, index=bm25_index_dir, strategy="marag", model=empty, options={"k": 1})
    assert [s.input["query"] for s in result.trace.steps if s.kind == "retrieve"] == [QUESTION]
    many = scripted(planner={"analysis": "", "steps": [f"step {i}" for i in range(8)]}, **common)
    result = answer(
        QUESTION,
        index=bm25_index_dir,
        strategy="marag",
        model=many,
        options={"k": 1, "max_steps": 3},
    )
    assert sum(s.kind == "retrieve" for s in result.trace.steps) == 3
    assert any("keeping 3" in str(s.output) for s in result.trace.steps if s.kind == "note")


def test_a_step_without_success_stops_the_plan(bm25_index_dir):
    model = scripted(
        planner={"analysis": "", "steps": ["a?", "b?", "c?"]},
        extractor={"note": ""},
        qa={"analysis": "", "answer": "unknown", "success": "no", "rating": 1},
        summary={"output": "", "answer": "unknown", "score": 1},
        step_definer={"type": "question-answering", "task": "b?"},
    )
    result = answer(QUESTION, index=bm25_index_dir, strategy="marag", model=model, options={"k": 1})
    assert sum(s.kind == "retrieve" for s in result.trace.steps) == 1
    assert result.text == "unknown"
    assert any("no success" in str(s.output) for s in result.trace.steps)


def test_repeated_invalid_json_degrades_without_looping(bm25_index_dir):
    model = scripted(planner="garbage", extractor="garbage", qa="garbage", summary="garbage")
    result = answer(QUESTION, index=bm25_index_dir, strategy="marag", model=model, options={"k": 2})
    assert result.text == ""
    assert result.trace.parse_failures_by_role() == {
        "planner": 2,
        "extractor": 4,
        "qa": 2,
        "summary": 2,
    }
    assert len(model.calls) == 10


def test_call_limit_bounds_the_run(bm25_index_dir):
    steps = [f"Who built lighthouse number {i}?" for i in range(4)]
    model = scripted(
        planner={"analysis": "", "steps": steps},
        step_definer={"type": "question-answering", "task": "Who built Korr Beacon?"},
        extractor={"note": "It was built by Emrik Tollan."},
        qa=qa_answer,
        summary={"output": "", "answer": "s", "score": 1},
    )
    result = answer(
        QUESTION,
        index=bm25_index_dir,
        strategy="marag",
        model=model,
        options={"k": 3, "max_calls": 10},
    )
    assert result.trace.totals()["llm_calls"] <= 10
    assert any("call limit" in str(s.output) for s in result.trace.steps if s.kind == "note")
    assert result.text == "Emrik Tollan"  # the last finished step's answer


def test_the_span_reader_takes_the_notes_when_asked(bm25_index_dir):
    from ragteam.retrieval import load_index

    seen_notes = []

    def qa(messages):
        seen_notes.append(messages[-1]["content"])
        return qa_answer(messages)

    model = scripted(
        planner={"analysis": "one hop", "steps": ["Who built the Wrenhold Lighthouse?"]},
        qa=qa,
        summary={"output": "It was Emrik Tollan.", "answer": "Emrik Tollan", "score": 9},
    )  # no extractor in the script: a call to it would fail
    result = answer(
        QUESTION,
        index=bm25_index_dir,
        strategy="marag",
        model=model,
        options={"k": 4, "fact_reader": True},
    )
    assert result.text == "Emrik Tollan"
    assert [s.role for s in result.trace.steps if s.kind == "llm"] == ["planner", "qa", "summary"]
    (read,) = [s for s in result.trace.steps if s.kind == "read"]
    assert len(read.input["passages"]) == 4  # one reading of every passage the step retrieved
    index = load_index(bm25_index_dir)
    # the notes the QA agent saw are sentences of the passages (at most the best two), cited
    cited = [index.passage(c.passage_id).text for c in result.citations]
    assert 1 <= len(cited) <= 2
    notes_prompt = seen_notes[0]
    assert any(sentence in notes_prompt for text in cited for sentence in text.split(". ")[:3])
