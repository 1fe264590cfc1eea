"""llama.cpp speed-ups on the real embedded model: same outputs, less work."""

import json

import numpy as np
import pytest

from ragteam.llm import Request
from ragteam.llm.greedy_grammar import GreedyGrammar, schema_grammar
from ragteam.llm.llamacpp import LlamaCppModel
from ragteam.llm.prefix_states import common_prefix

SCHEMA = {
    "type": "object",
    "properties": {
        "facts": {"type": "array", "items": {"type": "string", "maxLength": 40}},
        "relevant": {"type": "boolean"},
    },
    "required": ["facts", "relevant"],
}


def test_common_prefix():
    a = np.array([1, 2, 3, 4])
    assert common_prefix(a, np.array([1, 2, 9])) == 2
    assert common_prefix(a, np.array([1, 2])) == 2
    assert common_prefix(a, np.array([], dtype=int)) == 0
    assert common_prefix(a, a) == 4


def test_schema_grammar_keeps_property_order():
    grammar = schema_grammar(SCHEMA)
    assert grammar is not None and "root" in grammar
    assert grammar.index("facts") < grammar.index("relevant")


@pytest.mark.integration
@pytest.mark.parametrize(
    "ask",
    ["List three facts about Paris.", "Is the sky green? Answer yes or no.", "Write a poem."],
)
def test_greedy_grammar_equals_full_vocabulary_grammar(embedded_model, ask):
    llm = embedded_model._llm
    messages = [{"role": "system", "content": "Reply in JSON."}, {"role": "user", "content": ask}]
    common = {"messages": messages, "max_tokens": 60, "temperature": 0}
    with embedded_model._lock:
        full = llm.create_chat_completion(
            response_format={"type": "json_object", "schema": SCHEMA}, **common
        )
        processor = GreedyGrammar(llm._model.vocab, schema_grammar(SCHEMA), llm.n_vocab())
        quick = llm.create_chat_completion(logits_processor=[processor], **common)
    processor.close()
    text = full["choices"][0]["message"]["content"]
    assert quick["choices"][0]["message"]["content"] == text
    assert full["usage"]["completion_tokens"] == quick["usage"]["completion_tokens"]
    if full["choices"][0]["finish_reason"] == "stop":
        assert set(json.loads(text)) == {"facts", "relevant"}


ROLE_A = [
    {"role": "system", "content": "You extract facts. " + "Keep each fact short. " * 60},
    {"role": "user", "content": "Passage: Paris is the capital of France. Question: capital?"},
]
ROLE_B = [
    {"role": "system", "content": "You plan searches. " + "One query per entity. " * 60},
    {"role": "user", "content": "Question: Who was born first, Ada or Alan?"},
]
ROLE_A2 = [
    ROLE_A[0],
    {"role": "user", "content": "Passage: Rome is the capital of Italy. Question: capital?"},
]


@pytest.mark.integration
def test_prefix_snapshots_restore_a_role_and_change_nothing(embedded_model):
    plain = LlamaCppModel(None, n_ctx=2048, speedups=False)
    fast = LlamaCppModel(None, n_ctx=2048, speedups=True)
    assert fast._llm is plain._llm  # one model in memory, two ways of calling it
    expected = [
        plain.complete(Request(m, max_tokens=24, json_schema=SCHEMA)).text
        for m in (ROLE_A, ROLE_B, ROLE_A2)
    ]
    before = fast._states.restored_tokens
    got = [
        fast.complete(Request(m, max_tokens=24, json_schema=SCHEMA)).text
        for m in (ROLE_A, ROLE_B, ROLE_A2)
    ]
    assert got == expected
    # ROLE_A2 shares ROLE_A's long instructions, computed two calls earlier
    assert fast._states.restored_tokens - before > 200


@pytest.mark.integration
def test_sampled_json_still_uses_the_full_grammar(embedded_model):
    fast = LlamaCppModel(None, n_ctx=2048, speedups=True)
    assert "response_format" in fast._constraint(SCHEMA, temperature=0.7)
    assert "logits_processor" in fast._constraint(SCHEMA, temperature=0.0)
    off = LlamaCppModel(None, n_ctx=2048, speedups=False)
    assert "response_format" in off._constraint(SCHEMA, temperature=0.0)
