"""The baselines: NoR (no retrieval) and OneR (retrieve once, then answer)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ragteam.errors import ParseError
from ragteam.llm.calls import complete_grounded, complete_traced
from ragteam.prompts import render
from ragteam.retrieval import retrieve_traced
from ragteam.strategies.base import (
    Context,
    cite,
    clean_answer,
    fit_passages,
    fit_question,
    format_passages,
)
from ragteam.types import Answer

STOP = ["\n\n", "\nQuestion:", "<|im_end|>"]


@dataclass
class NoR:
    """The model answers from its own knowledge."""

    name: ClassVar[str] = "nor"
    roles: ClassVar[tuple[str, ...]] = ("answerer",)
    needs_index: ClassVar[bool] = False
    max_answer_tokens: int = 48

    def run(self, question: str, ctx: Context) -> Answer:
        asked = fit_question(ctx, question, roles=self.roles)
        reply = complete_traced(
            ctx.model_for("answerer"),
            ctx.trace,
            "answerer",
            render("nor", question=asked),
            max_tokens=self.max_answer_tokens,
            stop=STOP,
        )
        return Answer(question, clean_answer(reply.text), self.name, [], ctx.trace)


@dataclass
class OneR:
    """Retrieve the top-k passages for the question once; answer with them in the prompt."""

    name: ClassVar[str] = "oner"
    roles: ClassVar[tuple[str, ...]] = ("answerer",)
    needs_index: ClassVar[bool] = True
    k: int = 5
    max_answer_tokens: int = 48

    def run(self, question: str, ctx: Context) -> Answer:
        index = ctx.require_index(self.name)
        asked = fit_question(ctx, question, roles=self.roles)
        found = retrieve_traced(index, ctx.trace, "retriever", asked, self.k)
        answerer = ctx.model_for("answerer")
        budget = answerer.context_length - self.max_answer_tokens - _fixed_cost(ctx, asked)
        shown = fit_passages(ctx, found, budget, "answerer")
        text = read_answer(ctx, asked, format_passages(shown), self.max_answer_tokens)
        return Answer(question, text, self.name, cite(shown, text), ctx.trace)


def read_answer(ctx: Context, question: str, context: str, max_tokens: int) -> str:
    """The short answer to `question` from `context` (numbered passages, maybe reasoning);
    empty, with a note in the trace, when the model can only repeat the worked example."""
    try:
        reply = complete_grounded(
            ctx.model_for("answerer"),
            ctx.trace,
            "answerer",
            render("oner", passages=context, question=question),
            max_tokens=max_tokens,
            stop=STOP,
        )
    except ParseError as exc:
        ctx.trace.note("answerer", f"{exc.reason}; no answer")
        return ""
    return clean_answer(reply.text)


def _fixed_cost(ctx: Context, question: str) -> int:
    """Tokens the OneR prompt takes besides the passages (template, question, chat markup)."""
    messages = render("oner", passages="", question=question)
    answerer = ctx.model_for("answerer")
    return sum(answerer.count_tokens(m["content"]) + 8 for m in messages) + 16
