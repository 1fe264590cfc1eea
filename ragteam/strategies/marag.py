"""MA-RAG: planner -> per step (step definer -> retrieval -> extractor notes -> QA agent) ->
summary. Aggregate steps answer from earlier step answers without retrieval. Stops when every step
is done or a step reports no success; bounded by `max_steps` and `max_calls`.

Failures degrade, never crash: no plan -> one step, the question itself; no step definition ->
the plan's step text as a question; an unreadable note -> that document is skipped; a failed QA
step -> stop with what is known; a failed summary -> the last step's answer.

With `fact_reader=true` the span reader plays the extractor: it reads the step's question
against the step's passages at once, and the sentence of each of the best two readings is that
passage's note (the others have none): one reading instead of a model call per passage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ragteam.agents import marag as agents
from ragteam.agents.role import role_names
from ragteam.errors import ParseError
from ragteam.formats import Posed
from ragteam.llm.fit import fit_text
from ragteam.reader.stage import locate
from ragteam.retrieval import retrieve_traced
from ragteam.strategies.base import Context, bounded, fit_question
from ragteam.types import Answer, Citation, Passage


class _Budget(Exception):
    """Raised when the next call would pass `max_calls`."""


@dataclass
class MARAG:
    """A planner splits the question into steps; each step gets its own search, notes taken
    from every passage and a short answer; a summary joins the steps' answers."""

    name: ClassVar[str] = "marag"
    roles: ClassVar[tuple[str, ...]] = role_names(*agents.ROLES)
    needs_index: ClassVar[bool] = True
    needs_model: ClassVar[bool] = True
    decides_verdicts: ClassVar[bool] = False
    k: int = bounded(5, 1, 100)
    max_steps: int = bounded(4, 1, 20)
    max_calls: int = bounded(40, 1, 500)
    document_tokens: int = 400
    define_first: bool = False  # the first step has no earlier answers to fold in: skip a call
    fact_reader: bool = False  # the span reader takes the notes, not the extractor model

    def run(self, posed: Posed, ctx: Context) -> Answer:
        question = posed.text
        asked = fit_question(ctx, question, roles=self.roles)
        state = agents.PlanExecState(asked, plan=self._plan(ctx, asked))
        cited: dict[str, Passage] = {}
        try:
            for step in state.plan:
                self._spend(ctx, 1)
                task = self._define(ctx, state, step)
                output, docs, notes = self._execute(ctx, state, task)
                state.step_question.append(task)
                state.step_output.append(output)
                state.step_docs_ids.append([p.id for p in docs])
                state.step_notes.append(notes)
                cited.update({p.id: p for p, n in zip(docs, notes, strict=True) if n})
                if output.success == "no":
                    state.stop = True
                    ctx.trace.note("marag", f"step '{task.task}' reported no success; stopping")
                    break
            self._spend(ctx, 1)
            final = self._summarize(ctx, state)
        except _Budget:
            ctx.trace.note("marag", f"stopped at the call limit ({self.max_calls})")
            final = state.step_output[-1].answer if state.step_output else ""
        ctx.trace.note(
            "marag",
            "final state",
            steps=[
                {
                    "task": q.task,
                    "type": q.type,
                    "answer": a.answer,
                    "success": a.success,
                    "rating": a.rating,
                    "docs": d,
                }
                for q, a, d in zip(
                    state.step_question, state.step_output, state.step_docs_ids, strict=False
                )
            ],
        )
        citations = [Citation.of(p) for p in cited.values()]
        return Answer(question, final, self.name, citations, ctx.trace)

    def _spend(self, ctx: Context, calls: int) -> None:
        if ctx.trace.tally.model_calls + calls > self.max_calls:
            raise _Budget

    def _plan(self, ctx: Context, question: str) -> list[str]:
        try:
            steps = agents.plan(ctx, question).step
        except ParseError as exc:
            ctx.trace.note("marag", f"planner failed ({exc.reason}); one step: the question")
            return [question]
        if not steps:
            ctx.trace.note("marag", "the plan has no steps; one step: the question")
            return [question]
        if len(steps) > self.max_steps:
            ctx.trace.note("marag", f"the plan has {len(steps)} steps; keeping {self.max_steps}")
        return steps[: self.max_steps]

    def _define(self, ctx: Context, state: agents.PlanExecState, step: str) -> agents.StepTaskState:
        if not state.step_output and not self.define_first:
            return agents.StepTaskState("question-answering", step)
        try:
            return agents.define_step(ctx, state, step)
        except ParseError as exc:
            ctx.trace.note("marag", f"step definer failed ({exc.reason}); asking the step as is")
            return agents.StepTaskState("question-answering", step)

    def _execute(
        self, ctx: Context, state: agents.PlanExecState, task: agents.StepTaskState
    ) -> tuple[agents.QAAnswerState, list[Passage], list[str]]:
        docs: list[Passage] = []
        notes: list[str] = []
        if task.type == "aggregate":
            notes_for_qa = [f"{q} -> {a}" for q, a in state.history()]
        else:
            docs = retrieve_traced(
                ctx.require_index(self.name),
                ctx.trace,
                ctx.retrieved,
                "retriever",
                task.task,
                self.k,
            )
            self._spend(ctx, 1 if self.fact_reader else len(docs) + 1)
            notes = self._notes(ctx, task.task, docs)
            notes_for_qa = [n for n in notes if n]
        try:
            output = agents.answer_step(ctx, task.task, notes_for_qa)
        except ParseError as exc:
            ctx.trace.note("marag", f"QA agent failed ({exc.reason}); stopping")
            output = agents.QAAnswerState("", "", "no", 0)
        return output, docs, notes

    def _notes(self, ctx: Context, task: str, docs: list[Passage]) -> list[str]:
        """A note per passage (empty where it holds nothing for the step)."""
        if not self.fact_reader:
            return [self._note(ctx, task, p) for p in docs]
        if not docs:
            return []
        ordered, judgements, _ = locate(ctx.readers.get(), ctx.trace, task, docs)
        found = {p.id: j.fact for p, j in zip(ordered, judgements, strict=True) if j.relevant}
        return [found.get(p.id, "") for p in docs]

    def _note(self, ctx: Context, task: str, passage: Passage) -> str:
        cut = fit_text(agents.EXTRACTOR.model(ctx), passage.text, self.document_tokens)[0]
        try:
            return agents.extract(ctx, task, f"{passage.title}: {cut}")
        except ParseError as exc:
            ctx.trace.note("marag", f"extractor failed on {passage.id} ({exc.reason}); skipped")
            return ""

    def _summarize(self, ctx: Context, state: agents.PlanExecState) -> str:
        if not state.step_output:
            return ""
        try:
            return agents.summarize(ctx, state)
        except ParseError as exc:
            ctx.trace.note("marag", f"summary failed ({exc.reason}); using the last step answer")
            return state.step_output[-1].answer
