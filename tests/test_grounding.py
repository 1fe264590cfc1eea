"""Every answer says how grounded it is: cited, read but uncited, no evidence, every step
failed — from its citations and its trace."""

from __future__ import annotations

from ragteam.trace import Step, Trace
from ragteam.types import Answer, Citation


def _search(hits: int) -> Step:
    output = [{"id": f"p{i}", "doc_id": "d", "title": "T", "score": 1.0} for i in range(hits)]
    return Step(kind="retrieve", role="search", input={"query": "q"}, output=output)


def _llm(error: str | None = None, parse_failures: int = 0) -> Step:
    return Step(
        kind="llm", role="answer", input="", output="x", error=error, parse_failures=parse_failures
    )


def _answer(text: str, citations: int, *steps: Step) -> Answer:
    cites = [Citation(f"p{i}", "T") for i in range(citations)]
    return Answer("q?", text, "oner", cites, Trace(list(steps)))


def test_a_cited_answer_is_grounded():
    g = _answer("Hevik", 2, _search(3), _llm()).grounding()
    assert (g.level, g.citations, g.passages_read) == ("cited", 2, 3)
    assert "cites 2 passages" in g.message


def test_an_answer_after_empty_searches_says_no_evidence():
    g = _answer("Barcelona", 0, _search(0), _search(0), _llm()).grounding()
    assert g.level == "no_evidence" and g.empty_searches == 2
    assert "own knowledge" in g.message


def test_read_but_not_cited_is_its_own_level():
    g = _answer("Hevik", 0, _search(4), _llm(parse_failures=1)).grounding()
    assert g.level == "uncited" and g.parse_failures == 1 and "read 4 passages" in g.message


def test_every_step_failed_or_an_empty_answer_is_not_an_answer():
    assert _answer("x", 0, _llm(error="boom"), _llm(error="boom")).grounding().level == "failed"
    assert _answer("", 1, _search(2), _llm()).grounding().level == "failed"
    assert _answer("x", 1, _search(2), _llm(error="boom")).grounding().level == "cited"


def test_grounding_travels_with_the_answer():
    data = _answer("Hevik", 0, _search(0), _llm()).to_dict()
    assert data["grounding"]["level"] == "no_evidence"
    assert Answer("q", "text", "nor").grounding().level == "no_evidence"
