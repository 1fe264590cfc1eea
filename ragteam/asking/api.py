"""The Python API; the CLI is a thin layer over it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ragteam.asking import AskRequest, requested
from ragteam.asking.posed import run_posed
from ragteam.asking.where import Where
from ragteam.errors import InputError
from ragteam.llm import ChatModel, ModelOptions
from ragteam.retrieval.index import Index
from ragteam.strategies import check_roles, make_strategy
from ragteam.tools.base import Tool
from ragteam.trace import Step, Trace, Writing
from ragteam.types import Answer

MAX_QUESTION_CHARS = 1_000_000


def check_question(question: str) -> str:
    if not isinstance(question, str) or not question.strip():
        raise InputError('the question is empty; ask something, e.g. ragteam ask "Who ...?"')
    try:
        question.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(
            f"the question holds bytes that are not UTF-8 text (at character {exc.start}); "
            "pass it as UTF-8"
        ) from exc
    if len(question) > MAX_QUESTION_CHARS:
        raise InputError(
            f"the question has {len(question):,} characters (limit {MAX_QUESTION_CHARS:,}); "
            "index long material as documents and ask about it instead"
        )
    return question.strip()


def answer(
    question: str,
    request: AskRequest | None = None,
    *,
    index: str | Path | Index | None = None,
    model: str | ChatModel | None = None,
    model_options: ModelOptions | None = None,
    role_models: dict[str, str | ChatModel] | None = None,
    tools: Iterable[Tool | Callable[..., Any]] = (),
    on_step: Callable[[Step], None] | None = None,
    on_writing: Callable[[Writing], None] | None = None,
    before: Sequence[Step] = (),
    **asked: Any,
) -> Answer:
    """Answer one question. How to answer is an `AskRequest` (`request`), or its options by
    name (`asked`, over `request` when both are given): `strategy` (default "read"), its
    `options` (e.g. {"k": 5}), `choices` (a multiple-choice question: the answer is an option
    label), `claim` (a statement judged true or false), `support` (how the answer's support is
    checked: a layer's name), `checker`, `abstain` ("not found" when nothing supports it),
    `verdicts` (who decides a claim: "fitted" or "own"), `instructions` and `temperature`
    (the asker's, for the roles that write the answer).

    Where it is asked: `index` is a directory built by `ragteam index build` (or a loaded
    `Index`); `model` a spec such as "embedded", "path/to/model.gguf", "openai:NAME" or a model
    object; `role_models` overrides the model of single agent roles, e.g.
    {"planner": "openai:qwen2.5-7b"}. `tools` are functions (typed, with a docstring) or
    `Tool`s that tool-using strategies (smurfs) may call, next to search and lookup. `on_step`
    is called with every trace step as it happens (to stream the work), `on_writing` with every
    model reply as it is written (`Writing.answer`: the answer so far). `before`: steps that
    happened before the answer's own and were already said (a server's model load, a
    follow-up's rewrite), put first in its trace: a finished answer is never edited after."""
    question = check_question(question)
    request = requested(request, **asked)  # every option checked before any work
    runner = make_strategy(request.strategy, request.options)
    check_roles([request.strategy], list(role_models or {}))
    where = Where(index, model, model_options or ModelOptions(), role_models or {}, tuple(tools))
    loaded = where.load(request.strategy, runner.needs_index, runner.needs_model)
    trace = Trace(on_step=on_step, on_writing=on_writing)
    trace.put_first(list(before))
    return run_posed(runner, question, loaded.context(request, trace), request)
