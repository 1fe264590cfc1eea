"""SMART's single-model trajectory mode on a scripted raw-text model and a real BM25 index."""

from __future__ import annotations

import pytest

from ragteam.asking.api import answer
from ragteam.errors import InputError
from ragteam.llm import FakeModel
from ragteam.retrieval import load_index
from ragteam.smart.format import GENERATOR, LOCATOR, RECONSTRUCTOR, parse_retrieval
from ragteam.strategies import make_strategy

QUESTION = "In which village was the engineer who built the Wrenhold Lighthouse born?"


def first_sentence(text: str) -> str:
    return text.split(". ")[0].rstrip(".") + "."


def scripted(recon="Search(Wrenhold Lighthouse; Emrik Tollan)", invent=False, answer_text="Hevik"):
    def reply(messages, params):
        prompt = messages[0]["content"]
        assert messages[0]["role"] == "raw"
        if prompt.endswith(RECONSTRUCTOR):
            return recon + "</eor>\n\n<retrieval>"
        if prompt.endswith(LOCATOR):
            lines = []
            for n, (title, text) in enumerate(parse_retrieval(prompt), start=1):
                if "Tollan" in text:
                    fact = "Tollan invented this." if invent else first_sentence(text)
                    lines.append(f"[Relevant]: [{n}] {title}\n{fact}")
                else:
                    lines.append(f"[Irrelevant]: [{n}] Lacking Supporting Facts")
            return "\n".join(lines) + "</eol>"
        if prompt.endswith(GENERATOR):
            return f"{answer_text}\n[Cite]: [1] [2] [99]</eog>"
        raise AssertionError(prompt[-200:])

    return FakeModel(reply)


def run(model, index_dir, **options):
    return answer(
        QUESTION,
        index=load_index(index_dir),
        strategy="smart",
        model=model,
        options={"mode": "trajectory", **options},
        support="off",  # the agent's own citations (the support stage: test_support)
    )


def test_trajectory_mode_runs_the_four_stages_in_one_growing_text(bm25_index_dir):
    model = scripted()
    result = run(model, bm25_index_dir)
    prompts = [c["messages"][0]["content"] for c in model.calls]
    assert len(prompts) == 3
    assert prompts[1].startswith(prompts[0]) and prompts[2].startswith(prompts[1])
    assert "Search(Wrenhold Lighthouse; Emrik Tollan)</eor>\n\n<retrieval>[1] " in prompts[1]
    assert [c["stop"] for c in model.calls] == [["</eor>"], ["</eol>"], ["</eog>"]]
    assert result.text == "Hevik"
    retrieved = [s for s in result.trace.steps if s.kind == "retrieve"]
    # the question is searched first (with_question, the default), then the model's intents
    assert [s.input["query"] for s in retrieved] == [
        QUESTION,
        "Wrenhold Lighthouse",
        "Emrik Tollan",
    ]
    [mode] = [s.meta for s in result.trace.steps if s.meta.get("event") == "mode"]
    assert mode["mode"] == "trajectory"
    index = load_index(bm25_index_dir)
    assert all(index.passage(c.passage_id) for c in result.citations)
    relevant = [ln for ln in prompts[2].splitlines() if ln.startswith("[Relevant]")]
    cited_numbers = [int(ln.split("[")[2].split("]")[0]) for ln in relevant]
    assert len(result.citations) == len([n for n in cited_numbers if n in (1, 2)])
    assert result.trace.totals()["parse_failures"] == 0
    [facts] = [s.meta["facts"] for s in result.trace.steps if s.meta.get("event") == "facts"]
    assert facts and all(index.passage(pid) for pid in facts)


def test_the_block_is_filled_as_training_builds_it(bm25_index_dir):
    """Question's top k, the intents' hits, then the question's further hits up to
    max_passages: the block `train build --question-first` trains the locator on."""
    model = scripted()
    result = run(model, bm25_index_dir, k=1, max_passages=5, fill_block=True)
    shown = [title for title, _ in parse_retrieval(model.calls[1]["messages"][0]["content"])]
    index = load_index(bm25_index_dir)
    asked = [p.id for p in index.retrieve(QUESTION, 5)]
    expected = asked[:1]
    for intent in ("Wrenhold Lighthouse", "Emrik Tollan"):
        expected += [p.id for p in index.retrieve(intent, 1) if p.id not in expected]
    expected = (expected + [i for i in asked if i not in expected])[:5]
    assert len(expected) == 5 and shown == [index.passage(i).title for i in expected]
    [note] = [s for s in result.trace.steps if s.meta.get("event") == "trajectory"]
    assert note.meta["passage_ids"] == expected  # [n] -> passage, for the locator's scoring
    unfilled = scripted()
    run(unfilled, bm25_index_dir, k=1, max_passages=5)
    prompt = unfilled.calls[1]["messages"][0]["content"]
    assert len(parse_retrieval(prompt)) == 3  # the default: the question's and intents' top k


def test_without_the_question_only_the_intents_are_searched(bm25_index_dir):
    result = run(scripted(), bm25_index_dir, with_question=False)
    retrieved = [s.input["query"] for s in result.trace.steps if s.kind == "retrieve"]
    assert retrieved == ["Wrenhold Lighthouse", "Emrik Tollan"]


def test_an_invented_fact_is_a_visible_failure_and_is_not_shown(bm25_index_dir):
    model = scripted(invent=True)
    result = run(model, bm25_index_dir)
    locator = [s for s in result.trace.steps if s.role == "locator"][0]
    assert locator.parse_failures == 1 and "not copied" in locator.error
    assert "Tollan invented this." not in model.calls[2]["messages"][0]["content"]
    assert result.citations == []  # nothing relevant survived, so nothing can be cited


def test_no_intents_falls_back_to_the_question(bm25_index_dir):
    result = run(scripted(recon="I do not know"), bm25_index_dir)
    recon = [s for s in result.trace.steps if s.role == "reconstructor"][0]
    assert recon.parse_failures == 1
    retrieved = [s for s in result.trace.steps if s.kind == "retrieve"]
    assert [s.input["query"] for s in retrieved] == [QUESTION]


def test_empty_answer_is_a_failed_generator_step(bm25_index_dir):
    result = run(scripted(answer_text=""), bm25_index_dir)
    generator = [s for s in result.trace.steps if s.role == "generator"][0]
    assert generator.parse_failures == 1 and result.text == ""


def test_unknown_mode_is_refused():
    with pytest.raises(InputError, match="mode must be one of"):
        make_strategy("smart", {"mode": "joint"})


class Tokenizing(FakeModel):
    """A scripted model whose tokenizer is one id per character."""

    def tokenize(self, text: str) -> list[int]:
        return [ord(c) for c in text]


def test_locator_bias_reaches_only_the_locator_call_on_the_token_that_parts_the_judgements(
    bm25_index_dir,
):
    model = Tokenizing(scripted()._fn)
    result = run(model, bm25_index_dir, locator_bias=2.5)
    # "[Relevant]" and "[Irrelevant]" part at their second character: R against I
    assert [c.get("logit_bias") for c in model.calls] == [None, {ord("R"): 2.5}, None]
    [locator] = [s for s in result.trace.steps if s.role == "locator"]
    assert locator.meta["logit_bias"] == {ord("R"): 2.5}
    assert run(scripted(), bm25_index_dir).text == "Hevik"  # no bias: no tokenizer needed
    with pytest.raises(InputError, match="tokenizer"):
        run(scripted(), bm25_index_dir, locator_bias=1.0)


def test_locator_grammar_reaches_only_the_locator_call_and_names_every_shown_passage(
    bm25_index_dir,
):
    model = scripted()
    result = run(model, bm25_index_dir, locator_grammar=True)
    grammars = [c.get("grammar") for c in model.calls]
    assert grammars[0] is None and grammars[2] is None and grammars[1]
    [locator] = [s for s in result.trace.steps if s.role == "locator"]
    assert locator.meta["grammar"] == "locator"
    shown = parse_retrieval(locator.input[0]["content"])
    for n, (title, text) in enumerate(shown, start=1):
        assert f'"[Relevant]: [{n}] {title}\\n"' in grammars[1]
        assert first_sentence(text) in grammars[1]
    assert result.text == "Hevik"
    plain = run(scripted(), bm25_index_dir, locator_grammar=False)
    assert not any("grammar" in s.meta for s in plain.trace.steps)


class Reversing:
    """A reranker that puts the block in reverse retrieval order (a stand-in for MiniLM)."""

    identity = "rerank:reversing"

    def rerank(self, question, passages):
        return [(p, float(n)) for n, p in enumerate(passages)][::-1]


def test_a_reranker_orders_the_block_the_locator_reads(bm25_index_dir, monkeypatch):
    from ragteam.smart import strategy as smart

    plain = scripted()
    run(plain, bm25_index_dir)
    monkeypatch.setattr(smart, "load_reranker", lambda path: Reversing())
    reranked = scripted()
    result = run(reranked, bm25_index_dir, reranker="any.safetensors")

    def shown(model):
        return [title for title, _ in parse_retrieval(model.calls[1]["messages"][0]["content"])]

    assert len(shown(plain)) > 1 and shown(reranked) == shown(plain)[::-1]
    [step] = [s for s in result.trace.steps if s.role == "reranker"]
    [note] = [s for s in result.trace.steps if s.meta.get("event") == "rerank"]
    assert "rerank:reversing" in note.output
    assert step.kind == "rerank" and step.input["method"] == "rerank:reversing"
    searches = [s for s in result.trace.steps if s.role == "retriever"]
    assert searches and result.trace.totals()["retrieval_calls"] == len(searches)  # not +1
    [note] = [s for s in result.trace.steps if s.meta.get("event") == "trajectory"]
    assert note.meta["passage_ids"] == [h["doc_id"] or h["id"] for h in step.output]
