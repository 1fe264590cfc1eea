"""MA-RAG's roles (planner, step definer, extractor, QA agent, summary) and the authors' state
objects. Each role is a prompt, a JSON schema and a typed result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ragteam.agents.role import Players, Role, object_of, strings
from ragteam.agents.views import json_field

TEXT = {"type": "string", "maxLength": 300}
SHORT = {"type": "string", "maxLength": 100}
PLAN_SCHEMA = object_of(("analysis", "steps"), analysis=TEXT, steps=strings(1, 200, max_items=8))
STEP_SCHEMA = {
    "type": "object",
    "properties": {
        "type": {"enum": ["question-answering", "aggregate"]},
        "task": {"type": "string", "minLength": 1, "maxLength": 200},
    },
    "required": ["type", "task"],
}
NOTE_SCHEMA = {"type": "object", "properties": {"note": TEXT}, "required": ["note"]}
QA_SCHEMA = {
    "type": "object",
    "properties": {
        "analysis": TEXT,
        "answer": SHORT,
        "success": {"enum": ["yes", "no"]},
        "rating": {"type": "integer", "minimum": 0, "maximum": 10},
    },
    "required": ["analysis", "answer", "success", "rating"],
}
SUMMARY_SCHEMA = {
    "type": "object",
    "properties": {
        "output": TEXT,
        "answer": SHORT,
        "score": {"type": "integer", "minimum": 0, "maximum": 10},
    },
    "required": ["output", "answer", "score"],
}


@dataclass
class PlanState:
    analysis: str
    step: list[str]


@dataclass
class StepTaskState:
    type: Literal["question-answering", "aggregate"]
    task: str


@dataclass
class QAAnswerState:
    analysis: str
    answer: str
    success: Literal["yes", "no"]
    rating: int


@dataclass
class PlanExecState:
    original_question: str
    plan: list[str] = field(default_factory=list)
    step_question: list[StepTaskState] = field(default_factory=list)
    step_output: list[QAAnswerState] = field(default_factory=list)
    step_docs_ids: list[list[str]] = field(default_factory=list)
    step_notes: list[list[str]] = field(default_factory=list)
    plan_summary: str = ""
    stop: bool = False

    def history(self) -> list[tuple[str, str]]:
        """(step query, step answer) pairs: all that passes forward between steps."""
        return [
            (q.task, a.answer) for q, a in zip(self.step_question, self.step_output, strict=False)
        ]


PLANNER = Role("planner", "marag_planner", PLAN_SCHEMA, 200, slots=("question",))
STEP_DEFINER = Role(
    "step_definer", "marag_step", STEP_SCHEMA, 120, slots=("question", "plan", "history", "step")
)
EXTRACTOR = Role("extractor", "marag_extractor", NOTE_SCHEMA, 120, slots=("task", "document"))
QA = Role("qa", "marag_qa", QA_SCHEMA, 160, slots=("task", "notes"))
SUMMARY = Role(
    "summary",
    "marag_summary",
    SUMMARY_SCHEMA,
    160,
    view=json_field("answer"),
    slots=("question", "steps"),
)
ROLES = (PLANNER, STEP_DEFINER, EXTRACTOR, QA, SUMMARY)


def plan(ctx: Players, question: str) -> PlanState:
    value = PLANNER.call(ctx, question=question)
    steps = [s.strip() for s in value["steps"] if s.strip()]
    return PlanState(value["analysis"], steps)


def define_step(ctx: Players, state: PlanExecState, step: str) -> StepTaskState:
    plan_text = " ".join(f"{i}. {s}" for i, s in enumerate(state.plan, start=1))
    history = "; ".join(f"{q} -> {a}" for q, a in state.history()) or "none"
    value = STEP_DEFINER.call(
        ctx,
        question=state.original_question,
        plan=plan_text,
        history=history,
        step=step,
    )
    return StepTaskState(value["type"], value["task"].strip())


def extract(ctx: Players, task: str, document: str) -> str:
    value = EXTRACTOR.call(ctx, task=task, document=document)
    return value["note"].strip()


def answer_step(ctx: Players, task: str, notes: list[str]) -> QAAnswerState:
    shown = "\n".join(f"- {n}" for n in notes) or "- (no notes)"
    value = QA.call(ctx, task=task, notes=shown)
    return QAAnswerState(
        value["analysis"], value["answer"].strip(), value["success"], int(value["rating"])
    )


def summarize(ctx: Players, state: PlanExecState) -> str:
    steps = "\n".join(f"- {q} -> {a}" for q, a in state.history()) or "- (no steps)"
    value = SUMMARY.call(ctx, question=state.original_question, steps=steps)
    state.plan_summary = value["output"]
    return value["answer"].strip()
