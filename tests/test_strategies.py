"""Control flow of the strategies on a scripted model and a real BM25 index on disk."""

import pytest

from ragteam.agents.views import clean_answer
from ragteam.asking import AskRequest
from ragteam.asking.api import answer
from ragteam.errors import InputError, UnknownName
from ragteam.formats import Posed
from ragteam.llm import FakeModel
from ragteam.llm.fit import fit_text
from ragteam.retrieval import load_index
from ragteam.strategies import Context, available, make_strategy
from ragteam.trace import Trace

QUESTION = "Who built the Wrenhold Lighthouse?"


def test_oner_retrieves_prompts_with_passages_and_cites(bm25_index_dir):
    model = FakeModel(["Answer: Emrik Tollan.\nextra"])
    result = answer(QUESTION, index=bm25_index_dir, strategy="oner", model=model, options={"k": 3})
    assert result.text == "Emrik Tollan"
    kinds = [(s.kind, s.role) for s in result.trace.steps]
    assert kinds == [("retrieve", "retriever"), ("llm", "answerer"), ("support", "checker")]
    retrieved = [h["id"] for h in result.trace.steps[0].output]
    assert len(retrieved) == 3
    prompt = model.calls[0]["messages"][-1]["content"]
    assert "Wrenhold Lighthouse" in prompt and QUESTION in prompt
    index = load_index(bm25_index_dir)
    assert result.citations and all(c.passage_id in retrieved for c in result.citations)
    for c in result.citations:
        assert "Emrik Tollan" in index.passage(c.passage_id).text


def test_oner_withholds_an_answer_copied_from_its_worked_example(bm25_index_dir):
    # "1821" is the answer of the prompt's example; the demo passages never mention it
    model = FakeModel(["1821", "1821"])
    result = answer(
        "When was Ilse Marrow born?", index=bm25_index_dir, model=model, strategy="oner"
    )
    assert result.text == "" and result.citations == []
    assert len(model.calls[1]["messages"]) == 2  # asked again without the example
    assert result.trace.parse_failures_by_role() == {"answerer": 2}
    assert any("no answer" in s.output for s in result.trace.steps if s.kind == "note")
    fixed = answer(
        "When was Ilse Marrow born?",
        index=bm25_index_dir,
        model=FakeModel(["1821", "1823"]),
        strategy="oner",
    )
    assert fixed.text == "1823"


def test_nor_makes_one_call_and_no_retrieval():
    model = FakeModel(["Paris"])
    result = answer("Capital of France?", strategy="nor", model=model)
    assert result.text == "Paris" and result.citations == []
    assert [s.kind for s in result.trace.steps] == ["llm"]


def test_unknown_strategy_lists_valid_ones():
    with pytest.raises(UnknownName) as info:
        make_strategy("nope")
    assert "nor" in str(info.value) and "oner" in str(info.value)
    assert {"nor", "oner"} <= set(available())


def test_unknown_option_is_an_error():
    with pytest.raises(InputError, match="has no option kk"):
        make_strategy("oner", {"kk": 3})


@pytest.mark.parametrize("question", ["", "   \n\t "])
def test_empty_question_is_refused(question):
    with pytest.raises(InputError, match="empty"):
        answer(question, strategy="nor", model=FakeModel(["x"]))


def test_retrieving_strategy_without_index():
    with pytest.raises(InputError, match="--index"):
        answer(QUESTION, strategy="oner", model=FakeModel(["x"]))


def test_huge_question_is_fitted_and_the_trace_says_so(bm25_index_dir):
    question = ("background " * 20_000) + "Who built the Wrenhold Lighthouse?"
    assert len(question) > 100_000
    model = FakeModel(["Emrik Tollan"], context_length=2048)
    result = answer(question, index=bm25_index_dir, strategy="oner", model=model)
    notes = [s for s in result.trace.steps if s.kind == "note" and s.role == "budget"]
    assert notes and "question cut" in notes[0].output
    sent = sum(model.count_tokens(m["content"]) for m in model.calls[0]["messages"])
    assert sent + 48 <= 2048
    assert "Wrenhold Lighthouse?" in model.calls[0]["messages"][-1]["content"]


def test_fit_text_keeps_both_ends():
    model = FakeModel([])
    text = "START " + "x" * 3000 + " END"
    fitted, cut = fit_text(model, text, 100)
    assert cut and fitted.startswith("START") and fitted.endswith("END")
    assert model.count_tokens(fitted) <= 100
    assert fit_text(model, "short", 100) == ("short", False)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Answer: Hevik.", "Hevik"),
        ('  \n"Hevik"\nmore', "Hevik"),
        ("The answer is: 1821", "1821"),
        ("U.S.A.", "U.S.A"),
        ("", ""),
    ],
)
def test_clean_answer(raw, clean):
    assert clean_answer(raw) == clean


def test_strategy_runs_directly_with_a_context(bm25_index_dir):
    index = load_index(bm25_index_dir)
    ctx = Context(FakeModel(["Hevik"]), index, Trace())
    result = make_strategy("oner", {"k": 2}).run(Posed(QUESTION), ctx)
    assert len(result.trace.steps[0].output) == 2


def test_a_role_can_run_on_another_model(bm25_index_dir):
    default = FakeModel(
        lambda m, p: (
            {"analysis": "", "steps": ["Who built the Wrenhold Lighthouse?"]}
            if "plan how" in m[0]["content"]
            else {"note": ""}
        )
    )
    planner = FakeModel(
        [{"analysis": "", "steps": ["Who built the Wrenhold Lighthouse?"]}], identity="big"
    )
    qa = FakeModel(
        [
            {"analysis": "", "answer": "Emrik Tollan", "success": "yes", "rating": 7},
            {"output": "", "answer": "Emrik Tollan", "score": 7},
        ],
        identity="qa",
    )
    result = answer(
        QUESTION,
        index=bm25_index_dir,
        strategy="marag",
        model=default,
        options={"k": 2},
        role_models={"planner": planner, "qa": qa, "summary": qa},
    )
    assert result.text == "Emrik Tollan"
    assert len(planner.calls) == 1 and len(qa.calls) == 2
    assert all("read one document" in c["messages"][0]["content"] for c in default.calls)


def test_oner_looks_its_model_up_once_and_run_posed_leaves_the_strategys_answer(
    bm25_index_dir, monkeypatch
):
    """A model is looked up once per run (OneR asked three times), and posing a question
    returns a new Answer: the strategy's own is left as it returned it."""
    from ragteam.asking.posed import run_posed
    from ragteam.types import Answer

    looked: list[str] = []
    real = Context.model_for
    monkeypatch.setattr(
        Context, "model_for", lambda self, role: looked.append(role) or real(self, role)
    )
    ctx = Context(FakeModel(lambda m, p: "Hevik"), load_index(bm25_index_dir), Trace())
    make_strategy("oner").run(Posed("Where was the lighthouse engineer born?"), ctx)
    assert looked == ["answerer"]

    returned: list[Answer] = []

    class Says:
        name, needs_index, roles = "says", False, ()

        def run(self, posed, ctx):
            returned.append(Answer(posed.text, "Paris", "says", trace=ctx.trace))
            return returned[0]

    choices = AskRequest(choices={"A": "Paris", "B": "Rome"})
    posed = run_posed(Says(), "Capital?", Context(FakeModel([]), None, Trace()), choices)
    assert posed.text == "A" and returned[0].text == "Paris" and posed is not returned[0]
