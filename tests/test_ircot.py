"""IRCoT control flow on a scripted model and a real BM25 index."""

from ragteam.asking.api import answer
from ragteam.llm import FakeModel
from ragteam.retrieval import load_index

QUESTION = "In which village was the engineer who built the Wrenhold Lighthouse born?"


def test_retrieves_again_with_each_sentence_until_the_answer(bm25_index_dir):
    model = FakeModel(
        [
            "The Wrenhold Lighthouse was built by the engineer Emrik Tollan.",
            "Emrik Tollan was born in Hevik. So the answer is: Hevik.",
        ]
    )
    result = answer(QUESTION, index=bm25_index_dir, strategy="ircot", model=model)
    assert result.text == "Hevik"
    steps = [(s.kind, s.role) for s in result.trace.steps]
    assert steps == [
        ("retrieve", "retriever"),
        ("llm", "reasoner"),
        ("retrieve", "retriever"),
        ("llm", "reasoner"),
        ("support", "checker"),
    ]
    assert result.trace.steps[2].input["query"].startswith("The Wrenhold Lighthouse was built")
    second_prompt = model.calls[1]["messages"][-1]["content"]
    assert "Reasoning so far: The Wrenhold Lighthouse was built" in second_prompt
    index = load_index(bm25_index_dir)
    seen = {h["id"] for s in result.trace.steps if s.kind == "retrieve" for h in s.output}
    assert result.citations and all(c.passage_id in seen for c in result.citations)
    assert all("Hevik" in index.passage(c.passage_id).text for c in result.citations)


def test_step_limit_then_the_answer_is_read_off(bm25_index_dir):
    replies = [f"Fact number {i} about lighthouses." for i in range(3)] + ["Hevik"]
    model = FakeModel(replies)
    result = answer(
        QUESTION, index=bm25_index_dir, strategy="ircot", model=model, options={"max_steps": 3}
    )
    assert result.text == "Hevik"
    roles = [s.role for s in result.trace.steps if s.kind == "llm"]
    assert roles == ["reasoner"] * 3 + ["answerer"]
    assert "Reasoning: Fact number 0" in model.calls[-1]["messages"][-1]["content"]


def test_a_repeated_sentence_stops_the_loop(bm25_index_dir):
    model = FakeModel(["Tollan built it.", "Tollan built it.", "Emrik Tollan"])
    result = answer(
        QUESTION, index=bm25_index_dir, strategy="ircot", model=model, options={"max_steps": 8}
    )
    assert len(model.calls) == 3 and result.text == "Emrik Tollan"
    assert any(s.kind == "note" and "repeated" in s.output for s in result.trace.steps)


def test_prompts_fit_the_window(bm25_index_dir):
    long_sentence = "word " * 40
    model = FakeModel([f"{long_sentence} {i}" for i in range(6)] + ["x"], context_length=2048)
    answer(
        QUESTION,
        index=bm25_index_dir,
        strategy="ircot",
        model=model,
        options={"max_steps": 6, "k": 5},
    )
    for call in model.calls:
        used = sum(model.count_tokens(m["content"]) + 8 for m in call["messages"])
        assert used + call["max_tokens"] <= 2048


def test_the_span_reader_answers_from_everything_retrieved(bm25_index_dir):
    model = FakeModel(
        [
            "The Wrenhold Lighthouse was built by the engineer Emrik Tollan.",
            "Emrik Tollan was born in Hevik. So the answer is: somewhere else.",
        ]
    )
    result = answer(
        "Who built the Wrenhold Lighthouse?",
        index=bm25_index_dir,
        strategy="ircot",
        model=model,
        options={"reader": True},
    )
    index = load_index(bm25_index_dir)
    kinds = [s.kind for s in result.trace.steps]
    assert kinds.count("llm") == 2 and kinds.count("read") == 1  # the reasoner only searched
    (read,) = [s for s in result.trace.steps if s.kind == "read"]
    seen = [h["id"] for s in result.trace.steps if s.kind == "retrieve" for h in s.output]
    assert set(read.input["passages"]) == set(seen)  # every round's passages read at once
    best = result.evidence[0]
    assert result.text == best.text and result.text != "somewhere else"
    passage = index.passage(best.passage_id)
    assert passage.text[best.start : best.end] == result.text
    # cited (when the check keeps a citation) where the answer's words stand
    assert all(result.text in index.passage(c.passage_id).text for c in result.citations)
