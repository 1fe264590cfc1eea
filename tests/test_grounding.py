"""Every answer says how grounded it is — supported, partly supported, not supported by the
passages read, no evidence, failed, or not checked — from its support check and what its team
did (`Answer.work`: the searches as they were made, the steps as the trace counted them)."""

from __future__ import annotations

from dataclasses import replace

from ragteam.trace import Step, Trace
from ragteam.types import Answer, Citation, Passage, Retrieved, SentenceSupport, Support


def _search(hits: int) -> Step:
    output = [{"id": f"p{i}", "doc_id": "d", "title": "T", "score": 1.0} for i in range(hits)]
    return Step(kind="retrieve", role="search", input={"query": "q"}, output=output)


def _llm(error: str | None = None, parse_failures: int = 0) -> Step:
    return Step(
        kind="llm", role="answer", input="", output="x", error=error, parse_failures=parse_failures
    )


def _support(*backed: bool) -> Support:
    sentences = tuple(
        SentenceSupport(f"Sentence {n}.", 0, 0, 0.9 if ok else 0.1, ("p0",) if ok else (), ok)
        for n, ok in enumerate(backed)
    )
    return Support("checker", 0.5, sentences, ("p0", "p1", "p2"))


def _answer(text: str, citations: int, *steps: Step, support: Support | None = None) -> Answer:
    """An answer whose team took `steps`, recorded as a strategy records them: each step added
    to the trace, each search's passages handed to the answer's `Retrieved`."""
    cites = [Citation(f"p{i}", "T") for i in range(citations)]
    trace, retrieved = Trace(), Retrieved()
    for step in steps:
        trace.add(step)
        if step.kind == "retrieve":
            hits = [Passage(h["id"], h["title"], "text", h["doc_id"]) for h in step.output]
            retrieved.add(hits, step.input["query"])
    answer = Answer("q?", text, "oner", cites, trace, support=support)
    return replace(answer, work=retrieved.work(trace.tally))


def test_an_answer_every_sentence_of_which_is_backed_is_supported():
    g = _answer("Hevik", 1, _search(3), _llm(), support=_support(True)).grounding()
    assert (g.level, g.citations, g.passages_read, g.layer) == ("supported", 1, 3, "checker")
    assert "supported by 1 passage" in g.message and g.unsupported == []


def test_an_answer_with_unbacked_sentences_says_which():
    g = _answer("a. b.", 1, _search(3), _llm(), support=_support(True, False)).grounding()
    assert g.level == "partly_supported" and g.unsupported == ["Sentence 1."]
    assert "1 of 2 sentences" in g.message


def test_retrieved_passages_that_back_nothing_are_not_found_in_your_documents():
    g = _answer("Barcelona", 0, _search(3), _llm(), support=_support(False)).grounding()
    assert g.level == "not_supported" and "not found in your documents" in g.message
    assert g.score == 0.1


def test_an_answer_after_empty_searches_says_no_evidence():
    g = _answer("Barcelona", 0, _search(0), _search(0), _llm()).grounding()
    assert g.level == "no_evidence" and g.empty_searches == 2
    assert "own knowledge" in g.message


def test_an_unchecked_answer_does_not_pass_for_a_supported_one():
    g = _answer("Hevik", 3, _search(3), _llm(parse_failures=1)).grounding()
    assert g.level == "unchecked" and g.parse_failures == 1 and "read 3 passages" in g.message


def test_a_reply_found_unparsable_after_its_step_was_added_is_counted():
    """SMART reads its model's reply after the step is in the trace; marking it failed there
    counts it, as a failure known when the step was added is counted."""
    trace = Trace()
    step = trace.add(_llm())
    assert (trace.tally.model_calls, trace.tally.model_calls_unparsed) == (1, 0)
    trace.failed(step, "empty answer")
    tally = trace.tally
    assert (tally.parse_failures, tally.failed, tally.model_calls_unparsed) == (1, 1, 1)
    assert step.error == "empty answer" and step.parse_failures == 1


def test_every_step_failed_or_an_empty_answer_is_not_an_answer():
    assert _answer("x", 0, _llm(error="boom"), _llm(error="boom")).grounding().level == "failed"
    assert _answer("", 1, _search(2), _llm()).grounding().level == "failed"


def test_grounding_travels_with_the_answer_and_markers_follow_their_sentences():
    support = Support(
        "lexical",
        0.67,
        (
            SentenceSupport("Emrik Tollan built it.", 0, 22, 1.0, ("p2",), True),
            SentenceSupport("He was born in Hevik.", 23, 44, 1.0, ("p2", "p1"), True),
        ),
        ("p1", "p2", "p3"),
    )
    text = "Emrik Tollan built it. He was born in Hevik."
    answer = Answer(
        "q",
        text,
        "oner",
        [Citation("p2", "T"), Citation("p1", "T")],
        Trace(),
        read=[Citation(p, "T") for p in ("p1", "p2", "p3")],
        support=support,
    )
    assert answer.marked_text() == "Emrik Tollan built it [1]. He was born in Hevik [1][2]."
    data = answer.to_dict()
    assert data["grounding"]["level"] == "supported" and data["marked"] == answer.marked_text()
    assert [c["passage_id"] for c in data["read"]] == ["p1", "p2", "p3"]
    assert Answer("q", "text", "nor").grounding().level == "no_evidence"


def test_a_passage_two_searches_brought_is_read_once():
    """The label said "15 passages read" over 7 chips: it summed each search's hits, so a
    passage that three hops found counted three times."""
    g = _answer("Hevik", 3, _search(3), _search(3), _search(3), _llm()).grounding()
    assert g.passages_read == 3 and "read 3 passages" in g.message
    checked = _answer("Hevik", 1, _search(2), _search(2), _llm(), support=_support(True))
    assert checked.grounding().passages_read == 3  # the two found, and the third checked
