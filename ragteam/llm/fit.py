"""Text cut to a token budget of a model (questions, passages, an asker's instructions)."""

from __future__ import annotations

from ragteam.llm.base import ChatModel


def fit_text(model: ChatModel, text: str, max_tokens: int) -> tuple[str, bool]:
    """Cut `text` to at most `max_tokens`, keeping its beginning and its end (a long question
    usually ends with what is asked). Returns the text and whether it was cut."""
    if max_tokens <= 0:
        return "", bool(text)
    count = model.count_tokens(text)
    if count <= max_tokens:
        return text, False
    chars = int(len(text) * max_tokens / count)
    while chars > 0:
        half = chars // 2
        candidate = f"{text[:half]} [...] {text[len(text) - half :]}"
        if model.count_tokens(candidate) <= max_tokens:
            return candidate, True
        chars = int(chars * 0.9)
    return "", True
