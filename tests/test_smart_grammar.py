"""The trajectory locator's grammar: SMART's locator format, each passage judged once in order,
facts copied sentence by sentence; checked by llama.cpp's own grammar parser and sampler."""

from __future__ import annotations

import pytest

from ragteam.smart.format import EOL, parse_locator
from ragteam.smart.grammar import fact_sentences, literal, locator_grammar

PASSAGES = [
    ("Wrenhold Lighthouse", 'Built in 1871 by "Emrik" Tollan.  It stands 30 m tall!\nA C:\\ path.'),
    ("Café Ørsted", "Opened in 1990. Serves coffee."),
    ("Empty", "   "),
]


def test_literals_escape_quotes_backslashes_and_control_characters():
    assert literal('say "hi"\\ \n\t') == '"say \\"hi\\"\\\\ \\n\\x09"'
    assert literal("Ørsted") == '"Ørsted"'


def test_fact_sentences_are_squashed_and_deduplicated():
    assert fact_sentences("A b.  A b. C\nd?") == ["A b.", "C d?"]
    assert fact_sentences("  ") == []


def test_the_grammar_has_one_rule_per_passage_and_only_their_sentences():
    grammar = locator_grammar(PASSAGES)
    assert grammar.startswith('root ::= j1 "\\n" j2 "\\n" j3 "</eol>"\n')
    assert '"Built in 1871 by \\"Emrik\\" Tollan."' in grammar
    assert "s3" not in grammar  # a passage without text can only be irrelevant
    assert locator_grammar([]) == 'root ::= "</eol>"\n'


def _accepts(grammar: str, text: str) -> bool:
    """Whether llama.cpp's grammar sampler lets the embedded model's tokens of `text` through."""
    llama_cpp = pytest.importorskip("llama_cpp")
    from ragteam.llm.greedy_grammar import GreedyGrammar
    from ragteam.llm.llamacpp import LlamaCppModel

    model = LlamaCppModel(n_ctx=256)
    llm = model._llm
    tokens = llm.tokenize(text.encode(), add_bos=False, special=False)
    checker = GreedyGrammar(llm._model.vocab, grammar, llm.n_vocab())
    try:
        for token in tokens:
            if not checker._allows(token, 0.0):
                return False
            llama_cpp.llama_sampler_accept(checker._sampler, token)
        return True
    finally:
        checker.close()


@pytest.mark.integration
def test_llama_cpp_accepts_copied_facts_and_rejects_invented_ones():
    grammar = locator_grammar(PASSAGES)
    good = (
        '[Relevant]: [1] Wrenhold Lighthouse\nBuilt in 1871 by "Emrik" Tollan.\n'
        "It stands 30 m tall!\n[Irrelevant]: [2] Lacking Supporting Facts\n"
        "[Irrelevant]: [3] Lacking Supporting Facts" + EOL
    )
    assert _accepts(grammar, good)
    assert [j.index for j in parse_locator(good)] == [1, 2, 3]
    assert not _accepts(grammar, good.replace("1871", "1872"))  # an invented year
    assert not _accepts(grammar, good.replace("[2]", "[3]", 1))  # out of order
    assert not _accepts(grammar, "[Relevant]: [1] Wrenhold Lighthouse\nNothing here.")
