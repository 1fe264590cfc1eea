"""Smurfs' roles (seed 003): planner, executor (tool choice, then arguments), answer agent,
verifier, final answer. Each role is a prompt, a JSON schema and a typed result."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ragteam.agents.role import Players, Role, object_of, strings
from ragteam.agents.views import json_field
from ragteam.tools.base import Tool
from ragteam.types import Passage

SHORT = {"type": "string", "maxLength": 150}
PLAN_SCHEMA = object_of(("Tasks",), Tasks=strings(3, 200, max_items=6, min_items=1))
ANSWER_SCHEMA = {"type": "object", "properties": {"answer": SHORT}, "required": ["answer"]}
VERDICT_SCHEMA = {
    "type": "object",
    "properties": {"status": {"enum": ["solved", "pending"]}, "hint": SHORT},
    "required": ["status", "hint"],
}
NOT_FOUND = "not found"
ARGUMENT_CHARS = 100  # a tool argument string, when the tool sets no bound of its own


def choice_schema(names: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"thought": {"type": "string", "maxLength": 250}, "tool": {"enum": names}},
        "required": ["thought", "tool"],
    }


PLANNER = Role("planner", "smurfs_planner", PLAN_SCHEMA, slots=("question",))
# the executor's two prompts (which tool, then its arguments) are one role: one model plays it;
# each call gives the schema of the tools at hand
EXECUTOR = Role("executor", "smurfs_executor", slots=("task", "known", "hint", "tools"))
ARGUMENTS = replace(
    EXECUTOR,
    prompt="smurfs_arguments",
    max_tokens=160,
    slots=("task", "known", "seen", "thought", "tool"),
)
ANSWER_AGENT = Role("answer_agent", "smurfs_answer", ANSWER_SCHEMA, 80, slots=("task", "output"))
# a verdict may name the sub-task's words that the worked example also names
VERIFIER = Role(
    "verifier", "smurfs_verifier", VERDICT_SCHEMA, 100, grounded=False, slots=("task", "answer")
)
FINAL = Role(
    "final",
    "smurfs_final",
    ANSWER_SCHEMA,
    80,
    view=json_field("answer"),
    slots=("question", "log"),
)
ROLES = (PLANNER, EXECUTOR, ANSWER_AGENT, VERIFIER, FINAL)


@dataclass
class StepRecord:
    """One tool step: why, which tool with which arguments, what came back, what it answers."""

    tool: str
    arguments: dict[str, Any]
    thought: str
    output: str = ""
    answer: str = ""
    error: str | None = None
    passages: tuple[Passage, ...] = ()


@dataclass
class SubTask:
    task: str
    answer: str = ""
    status: Literal["solved", "unsolved", "step_limit"] = "unsolved"
    path: list[StepRecord] = field(default_factory=list)  # the local memory that solved it


def known_text(log: list[SubTask], local: list[StepRecord]) -> str:
    lines = [f"{s.task} -> {s.answer}" for s in log] + [
        f"{r.tool} found: {r.answer}" for r in local if r.answer
    ]
    return "; ".join(lines) or "nothing yet"


def seen_text(records: list[StepRecord], limit: int = 8) -> str:
    """The passages tools have shown so far, as `[id] title`, newest first."""
    found = {p.id: p for r in records for p in r.passages}
    shown = [f"[{p.id}] {p.title}" for p in reversed(found.values())][:limit]
    return ", ".join(shown) or "none"


def plan(ctx: Players, question: str) -> list[str]:
    value = PLANNER.call(ctx, question=question)
    return [t.strip() for t in value["Tasks"] if t.strip()]


def choose_tool(
    ctx: Players, task: str, known: str, hint: str, tools: list[Tool]
) -> tuple[str, str]:
    """(thought, tool name) among `tools`."""
    listing = "\n".join(f"- {t.describe()}" for t in tools)
    # Grounded: a thought that copies the worked example's names would carry them into the
    # arguments prompt, where they then look like the sub-task's own words.
    role = replace(EXECUTOR, schema=choice_schema([t.name for t in tools]))
    value = role.call(ctx, task=task, known=known, hint=hint or "none", tools=listing)
    return value["thought"].strip(), value["tool"]


def write_arguments(
    ctx: Players,
    task: str,
    known: str,
    thought: str,
    chosen: Tool,
    seen: str = "none",
) -> dict[str, Any]:
    role = replace(ARGUMENTS, schema=bounded_strings(chosen.schema_now()))
    return role.call(
        ctx,
        task=task,
        known=known,
        seen=seen,
        thought=thought or "none",
        tool=chosen.describe(),
    )


def bounded_strings(schema: dict[str, Any], limit: int = ARGUMENT_CHARS) -> dict[str, Any]:
    """The schema with a length bound on every string that has none, so that a small model's
    constrained decoding closes its strings instead of running into the token limit."""
    out = dict(schema)
    if out.get("type") == "string" and "maxLength" not in out and "enum" not in out:
        out["maxLength"] = limit
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: bounded_strings(v, limit) for k, v in out["properties"].items()}
    if isinstance(out.get("items"), dict):
        out["items"] = bounded_strings(out["items"], limit)
    return out


def condense(ctx: Players, task: str, output: str) -> str:
    value = ANSWER_AGENT.call(ctx, task=task, output=output)
    return value["answer"].strip()


def verify(ctx: Players, task: str, answer: str) -> tuple[str, str]:
    """(status, hint)."""
    value = VERIFIER.call(ctx, task=task, answer=answer or "(empty)")
    return value["status"], value["hint"].strip()


def final_answer(ctx: Players, question: str, log: list[SubTask]) -> str:
    shown = "\n".join(f"- {s.task} -> {s.answer}" for s in log) or "- (none)"
    value = FINAL.call(ctx, question=question, log=shown)
    return value["answer"].strip()
