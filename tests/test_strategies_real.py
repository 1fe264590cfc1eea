"""Multi-step strategies on the real embedded model over HotpotQA (dev300, first 3 questions)."""

import pytest

from ragteam.asking.api import answer
from ragteam.retrieval import load_index

pytestmark = pytest.mark.integration


OPTIONS = {
    "ircot": {"max_steps": 3},
    "smart": {"k": 2, "max_intents": 2},
    "marag": {"k": 2, "max_steps": 2},
}


@pytest.mark.parametrize("strategy", sorted(OPTIONS))
def test_answers_with_a_well_formed_trace(strategy, hotpot_bm25_dir, dev3, embedded_model):
    index = load_index(hotpot_bm25_dir)
    read = 0
    for q in dev3:
        result = answer(
            q["question"],
            index=index,
            strategy=strategy,
            model=embedded_model,
            options=OPTIONS[strategy],
        )
        steps = result.trace.steps
        assert any(s.kind == "retrieve" for s in steps)
        llm = [s for s in steps if s.kind == "llm"]
        assert llm and all(s.prompt_tokens > 0 and s.output is not None for s in llm)
        assert all(s.prompt_tokens + 48 <= embedded_model.context_length for s in llm)
        retrieved = {h["id"] for s in steps if s.kind == "retrieve" for h in s.output}
        read += bool(result.read)  # a query that matches nothing leaves nothing to check
        assert {c.passage_id for c in result.read} <= retrieved
        assert all(index.passage(c.passage_id) for c in result.read)
        # citations are earned: only the passages the support check found backing a sentence
        assert [c.passage_id for c in result.citations] == result.support.cited
        supported = {p for s in result.support.sentences if s.supported for p in s.passages}
        assert set(result.support.cited) == supported
        # at most 6 asked, plus one retry for each reply the trace records as failed (a bad
        # or example-copying reply is asked again once: calls.complete_json)
        retried = sum(1 for s in llm if s.error)
        assert result.trace.totals()["llm_calls"] == len(llm) <= 6 + retried
        assert retried <= len(llm) // 2
    assert read >= 1
