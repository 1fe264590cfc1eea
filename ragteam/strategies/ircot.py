"""IRCoT: interleave retrieval with chain-of-thought (Trivedi et al.), as SPEC describes.

Retrieve for the question; write one reasoning sentence; retrieve with that sentence and add the
new passages; repeat until a sentence says "So the answer is: ..." or `max_steps` is reached, then
read the answer off the reasoning (or ask for it once, OneR-style, over everything retrieved).
With `reader=true` the reasoning only searches: the span reader reads the question against
everything retrieved and its best span is the answer, with its evidence (as `read` answers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from ragteam.agents.answerers import ANSWERER, REASONER
from ragteam.agents.role import role_names
from ragteam.agents.views import clean_answer
from ragteam.formats import Posed
from ragteam.reader.stage import answer_by_reading
from ragteam.retrieval import retrieve_traced
from ragteam.strategies.base import (
    Context,
    bounded,
    cite,
    fit_passages,
    fit_question,
    format_passages,
)
from ragteam.strategies.baselines import read_answer
from ragteam.types import Answer, Passage

ANSWER = re.compile(r"so the answer is\s*:?\s*(.+)", re.IGNORECASE | re.DOTALL)


@dataclass
class IRCoT:
    """Thinks one sentence at a time and searches again with each sentence, until a sentence
    says "So the answer is"; good when the answer needs two facts found one after the other."""

    name: ClassVar[str] = "ircot"
    roles: ClassVar[tuple[str, ...]] = role_names(REASONER, ANSWERER)
    needs_index: ClassVar[bool] = True
    needs_model: ClassVar[bool] = True
    decides_verdicts: ClassVar[bool] = False
    k: int = bounded(3, 1, 100)
    max_steps: int = bounded(5, 1, 20)
    max_sentence_tokens: int = 48
    max_answer_tokens: int = bounded(48, 1, 2_048)
    reader: bool = False  # the span reader answers from everything retrieved

    def run(self, posed: Posed, ctx: Context) -> Answer:
        question = posed.text
        index = ctx.require_index(self.name)
        asked = fit_question(ctx, question, roles=self.roles)
        rounds: list[list[Passage]] = [
            retrieve_traced(index, ctx.trace, ctx.retrieved, "retriever", asked, self.k)
        ]
        seen = {p.id for p in rounds[0]}
        sentences: list[str] = []
        answer = ""
        for _step in range(self.max_steps):
            shown = self._shown(ctx, asked, rounds, sentences)
            reply = REASONER.write(
                ctx,
                max_tokens=self.max_sentence_tokens,
                passages=format_passages(shown),
                question=asked,
                reasoning=" ".join(sentences) or "(none yet)",
            )
            sentence = " ".join(reply.text.split())
            if match := ANSWER.search(sentence):
                answer = clean_answer(match.group(1))
                sentences.append(sentence)
                break
            if not sentence or sentence in sentences:
                ctx.trace.note("ircot", "the reasoner repeated itself or wrote nothing; stopping")
                break
            sentences.append(sentence)
            found = retrieve_traced(index, ctx.trace, ctx.retrieved, "retriever", sentence, self.k)
            rounds.append([p for p in found if p.id not in seen])
            seen |= {p.id for p in found}
        everything = [p for group in rounds for p in group]
        if self.reader and (
            read := answer_by_reading(question, everything, ctx.trace, self.name, ctx.readers.get())
        ):
            return read
        if not answer:
            answer = self._read_answer(ctx, asked, rounds, sentences)
        return Answer(question, answer, self.name, cite(everything, answer), ctx.trace)

    def _shown(
        self, ctx: Context, question: str, rounds: list[list[Passage]], sentences: list[str]
    ) -> list[Passage]:
        """Newest passages first, then older ones, trimmed to what the window holds."""
        newest_first = [p for group in reversed(rounds) for p in group]
        reasoner = REASONER.model(ctx)
        fixed = REASONER.prompt_tokens(
            reasoner, passages="", question=question, reasoning=" ".join(sentences)
        )
        budget = reasoner.context_length - self.max_sentence_tokens - fixed - 16
        return fit_passages(ctx, newest_first, budget, REASONER.name)

    def _read_answer(
        self, ctx: Context, question: str, rounds: list[list[Passage]], sentences: list[str]
    ) -> str:
        shown = self._shown(ctx, question, rounds, sentences)
        context = format_passages(shown)
        if sentences:
            context += "\n\nReasoning: " + " ".join(sentences)
        return read_answer(ctx, question, context, self.max_answer_tokens)
