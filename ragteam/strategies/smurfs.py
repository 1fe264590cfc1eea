"""Smurfs (seed 003): planner -> per sub-task a depth-first search over tool steps (executor
chooses a tool and writes its arguments, the tool runs, the answer agent condenses the output,
the verifier says solved or pending with a hint) -> final answer from the request and the task
log.

Backtracking as the paper: a failing tool (error, timeout, invalid arguments, empty output) is
marked used at this step and another is tried; when every tool at a step has failed, the last
step is popped from local memory (its tool stays marked at its own step); when nothing is left,
the sub-task ends "cannot answer accurately" with a partial answer from global memory. At most
`max_steps` tool attempts per sub-task; every count is bounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ragteam.agents import smurfs as agents
from ragteam.agents.role import role_names
from ragteam.agents.smurfs import StepRecord, SubTask
from ragteam.errors import InputError, ParseError
from ragteam.formats import Posed
from ragteam.strategies.base import Context, bounded, cite, fit_question
from ragteam.tools import ToolBox, bound, general_tools, index_tools
from ragteam.types import Answer

CANNOT = "cannot answer accurately"


class _Budget(Exception):
    """The next call would pass `max_calls` or `max_tool_calls`."""


@dataclass
class Smurfs:
    """Plans sub-tasks and solves each with tools (search, lookup, your own), checking each
    result and trying another way when one fails; then answers from what it found."""

    name: ClassVar[str] = "smurfs"
    roles: ClassVar[tuple[str, ...]] = role_names(*agents.ROLES)
    needs_index: ClassVar[bool] = False  # search/lookup join the tools when an index is given
    needs_model: ClassVar[bool] = True
    decides_verdicts: ClassVar[bool] = False
    k: int = bounded(3, 1, 100)
    max_subtasks: int = bounded(3, 1, 10)
    max_steps: int = bounded(3, 1, 20)
    max_tool_calls: int = bounded(12, 1, 100)
    max_calls: int = bounded(40, 1, 500)
    output_chars: int = bounded(1200, 100, 20_000)
    planner: bool = True
    verifier: bool = True
    answer_agent: bool = True
    general_tools: bool = False  # also offer calculator and today

    def run(self, posed: Posed, ctx: Context) -> Answer:
        question = posed.text
        asked = fit_question(ctx, question, roles=self.roles)
        box = self._toolbox(ctx)
        log: list[SubTask] = []
        try:
            for task in self._plan(ctx, asked):
                log.append(self._solve(ctx, box, task, log))
            final = self._final(ctx, asked, log)
        except _Budget as limit:
            ctx.trace.note("smurfs", f"stopped: {limit}")
            final = _last_solved(log)
        ctx.trace.note("smurfs", "task log", event="task_log", tasks=[_log_entry(s) for s in log])
        used = {p.id: p for s in log for r in s.path for p in r.passages}
        return Answer(question, final, self.name, cite(list(used.values()), final), ctx.trace)

    def _toolbox(self, ctx: Context) -> ToolBox:
        tools = (
            [*index_tools(ctx.index, ctx.trace, ctx.retrieved, self.k)]
            if ctx.index is not None
            else []
        )
        tools += general_tools() if self.general_tools else []
        box = ToolBox([*tools, *ctx.tools], max_chars=self.output_chars)
        if not len(box):
            raise InputError("smurfs has no tools: pass an index (--index) or --tools/--mcp")
        return box

    def _plan(self, ctx: Context, question: str) -> list[str]:
        if not self.planner:
            return [question]
        self._spend(ctx)
        try:
            tasks = agents.plan(ctx, question)
        except ParseError as exc:
            ctx.trace.note("smurfs", f"planner failed ({exc.reason}); one sub-task: the request")
            return [question]
        if len(tasks) > self.max_subtasks:
            ctx.trace.note("smurfs", f"{len(tasks)} sub-tasks; keeping {self.max_subtasks}")
        return tasks[: self.max_subtasks] or [question]

    def _solve(self, ctx: Context, box: ToolBox, task: str, log: list[SubTask]) -> SubTask:
        local: list[StepRecord] = []  # the current path
        memory: list[StepRecord] = []  # every step, abandoned ones too
        tried: list[set[str]] = [set()]  # tools used at each depth of the path
        hint = ""
        for _ in range(self.max_steps):
            while not (untried := [t for t in box if t.name not in tried[-1] and t.ready()]):
                if not local:
                    return self._give_up(ctx, task, memory, "every tool failed")
                popped = local.pop()
                tried.pop()
                ctx.trace.note(
                    "smurfs",
                    f"backtrack: every tool failed after {popped.tool}; step popped",
                    event="backtrack",
                    task=task,
                    depth=len(local),
                )
            record = self._attempt(ctx, box, task, log, local, hint, untried)
            tried[-1].add(record.tool)
            memory.append(record)
            if record.error is not None:
                continue
            status, hint = self._verify(ctx, task, record.answer)
            if status == "solved":
                return SubTask(task, record.answer, "solved", [*local, record])
            local.append(record)
            tried.append(set())
        partial = _last_answer(memory)
        ctx.trace.note("smurfs", f"step limit ({self.max_steps}) reached", event="step_limit")
        return SubTask(task, partial or CANNOT, "step_limit", local or memory[-1:])

    def _attempt(
        self,
        ctx: Context,
        box: ToolBox,
        task: str,
        log: list[SubTask],
        local: list[StepRecord],
        hint: str,
        untried: list[Any],
    ) -> StepRecord:
        known = agents.known_text(log, local)
        if len(untried) == 1:
            thought, name = "", untried[0].name
        else:
            self._spend(ctx)
            try:
                thought, name = agents.choose_tool(ctx, task, known, hint, untried)
            except ParseError as exc:
                ctx.trace.note("smurfs", f"executor chose no tool ({exc.reason}); first untried")
                thought, name = "", untried[0].name
        self._spend(ctx)
        try:
            chosen = box.get(name)
            seen = agents.seen_text([*log_records(log), *local])
            arguments = agents.write_arguments(ctx, task, known, thought, chosen, seen)
        except ParseError as exc:
            return StepRecord(name, {}, thought, error=f"no valid arguments ({exc.reason})")
        self._spend_tool(ctx)
        result = box.call(name, arguments, ctx.trace)
        if not result.ok:
            return StepRecord(name, arguments, thought, result.text, error=result.error or "empty")
        answer = self._condense(ctx, task, result.text)
        return StepRecord(name, arguments, thought, result.text, answer, None, result.passages)

    def _condense(self, ctx: Context, task: str, output: str) -> str:
        if not self.answer_agent:
            return bound(output, 300)
        self._spend(ctx)
        try:
            return agents.condense(ctx, task, output)
        except ParseError as exc:
            ctx.trace.note("smurfs", f"answer agent failed ({exc.reason}); raw output kept")
            return bound(output, 300)

    def _verify(self, ctx: Context, task: str, answer: str) -> tuple[str, str]:
        if not self.verifier:
            return "solved", ""
        if not answer or answer.lower().strip(" .") == agents.NOT_FOUND:
            return "pending", "the last tool found nothing; search with other words"
        self._spend(ctx)
        try:
            return agents.verify(ctx, task, answer)
        except ParseError as exc:
            ctx.trace.note("smurfs", f"verifier failed ({exc.reason}); taken as solved")
            return "solved", ""

    def _give_up(self, ctx: Context, task: str, memory: list[StepRecord], why: str) -> SubTask:
        partial = _last_answer(memory)
        answer = f"{CANNOT}; partial answer: {partial}" if partial else CANNOT
        ctx.trace.note("smurfs", f"sub-task '{task}': {why}; {answer}", event="give_up")
        return SubTask(task, answer, "unsolved", [r for r in memory if r.answer][-1:])

    def _final(self, ctx: Context, question: str, log: list[SubTask]) -> str:
        self._spend(ctx)
        try:
            return agents.final_answer(ctx, question, log)
        except ParseError as exc:
            ctx.trace.note("smurfs", f"final answer failed ({exc.reason}); last solved sub-task")
            return _last_solved(log)

    def _spend(self, ctx: Context) -> None:
        if ctx.trace.tally.model_calls >= self.max_calls:
            raise _Budget(f"call limit ({self.max_calls}) reached")

    def _spend_tool(self, ctx: Context) -> None:
        if ctx.trace.tally.tool_calls >= self.max_tool_calls:
            raise _Budget(f"tool-call limit ({self.max_tool_calls}) reached")


def log_records(log: list[SubTask]) -> list[StepRecord]:
    return [r for s in log for r in s.path]


def _last_solved(log: list[SubTask]) -> str:
    return next((s.answer for s in reversed(log) if s.status == "solved"), "")


def _last_answer(memory: list[StepRecord]) -> str:
    found = [r.answer for r in memory if r.answer and r.answer.lower() != agents.NOT_FOUND]
    return found[-1] if found else ""


def _log_entry(sub: SubTask) -> dict[str, Any]:
    return {
        "task": sub.task,
        "answer": sub.answer,
        "status": sub.status,
        "path": [{"tool": r.tool, "arguments": r.arguments, "answer": r.answer} for r in sub.path],
    }
