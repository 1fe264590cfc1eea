"""The baselines: NoR (no retrieval) and OneR (retrieve once, then answer)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ragteam.agents.answerers import ANSWERER, ANSWERER_DIRECT
from ragteam.agents.role import Players, Solo, role_names
from ragteam.agents.views import clean_answer
from ragteam.errors import ParseError
from ragteam.formats import Posed
from ragteam.llm.base import ChatModel
from ragteam.retrieval import retrieve_traced
from ragteam.strategies.answer_labels import label_bias
from ragteam.strategies.base import (
    bounded,
    cite,
    fit_passages,
    fit_question,
    format_passages,
)
from ragteam.types import Answer


@dataclass
class NoR:
    """The model answers from its own knowledge."""

    name: ClassVar[str] = "nor"
    roles: ClassVar[tuple[str, ...]] = role_names(ANSWERER_DIRECT)
    needs_index: ClassVar[bool] = False
    needs_model: ClassVar[bool] = True
    decides_verdicts: ClassVar[bool] = False
    max_answer_tokens: int = bounded(48, 1, 2_048)

    def run(self, posed: Posed, ctx: Players) -> Answer:
        question = posed.text
        asked = fit_question(ctx, question, roles=self.roles)
        reply = ANSWERER_DIRECT.write(ctx, max_tokens=self.max_answer_tokens, question=asked)
        return Answer(question, clean_answer(reply.text), self.name, [], ctx.trace)


@dataclass
class OneR:
    """Retrieve the top-k passages for the question once; answer with them in the prompt."""

    name: ClassVar[str] = "oner"
    roles: ClassVar[tuple[str, ...]] = role_names(ANSWERER)
    needs_index: ClassVar[bool] = True
    needs_model: ClassVar[bool] = True
    decides_verdicts: ClassVar[bool] = False
    k: int = bounded(5, 1, 100)
    max_answer_tokens: int = bounded(48, 1, 2_048)
    # a labelled question's fitted label biases (strategies/answer_labels), when the model is the
    # one they were fitted for
    label_biases: bool = True

    def run(self, posed: Posed, ctx: Players) -> Answer:
        question = posed.text
        index = ctx.require_index(self.name)
        answerer = ANSWERER.model(ctx)  # looked up once per run
        asked = fit_question(ctx, question, model=answerer)
        found = retrieve_traced(index, ctx.trace, ctx.retrieved, "retriever", asked, self.k)
        budget = answerer.context_length - self.max_answer_tokens - _fixed_cost(answerer, asked)
        shown = fit_passages(ctx, found, budget, model=answerer)
        # the answerer looked up once; what it does with the asker's settings is the answer's
        played = Solo(answerer, ctx.trace, ctx.instructions, ctx.temperature, ctx.applied)
        bias = label_bias(answerer, posed) if self.label_biases else {}
        if bias:
            ctx.trace.note(
                ANSWERER.name,
                "label biases fitted on training rows added to the labels' first tokens",
                event="label_bias",
                bias={str(t): b for t, b in bias.items()},
            )
        text = read_answer(
            played, asked, format_passages(shown), self.max_answer_tokens, logit_bias=bias
        )
        return Answer(question, text, self.name, cite(shown, text), ctx.trace)


def read_answer(
    ctx: Players,
    question: str,
    context: str,
    max_tokens: int,
    logit_bias: dict[int, float] | None = None,
) -> str:
    """The short answer to `question` from `context` (numbered passages, maybe reasoning);
    empty, with a note in the trace, when the model can only repeat the worked example.
    `logit_bias`: for a labelled question, the answerer's fitted label biases."""
    try:
        reply = ANSWERER.write(
            ctx,
            max_tokens=max_tokens,
            logit_bias=logit_bias,
            passages=context,
            question=question,
        )
    except ParseError as exc:
        ctx.trace.note(ANSWERER.name, f"{exc.reason}; no answer")
        return ""
    return clean_answer(reply.text)


def _fixed_cost(model: ChatModel, question: str) -> int:
    """Tokens the OneR prompt takes besides the passages (template, question, chat markup)."""
    return ANSWERER.prompt_tokens(model, passages="", question=question) + 16
