"""The tools every tool-using strategy gets: search and lookup over the current index, a safe
calculator, today's date."""

from __future__ import annotations

import ast
import datetime as dt
import math
import operator
import re
from dataclasses import replace
from typing import Any

from ragteam.retrieval import retrieve_traced
from ragteam.retrieval.index import Index
from ragteam.tools.base import Tool, ToolOutput, make_tool
from ragteam.trace import Trace
from ragteam.types import Passage, Retrieved

PASSAGE_CHARS = 600


def index_tools(index: Index, trace: Trace, retrieved: Retrieved, default_k: int = 3) -> list[Tool]:
    """search and lookup bound to one index and one answer's trace; lookup is ready once
    search has shown passages, and finds them by id or by title."""
    shown: dict[str, Passage] = {}

    def search(query: str, k: int = default_k) -> ToolOutput:
        """Search the documents; returns the best passages with their ids and titles.

        Args:
            query: what to look for, a few words or a question
            k: how many passages to return (1-10)
        """
        if not query.strip():
            raise ValueError("the query is empty")
        found = retrieve_traced(index, trace, retrieved, "search", query, max(1, min(int(k), 10)))
        if not found:
            return ToolOutput("no passage matches this query")
        shown.update({p.id: p for p in found})
        lines = [f"[{p.id}] {p.title}: {p.text[:PASSAGE_CHARS]}" for p in found]
        return ToolOutput("\n".join(lines), tuple(found))

    def lookup(passage_id: str, keyword: str) -> ToolOutput:
        """The sentences of one passage that contain a keyword.

        Args:
            passage_id: the id of a passage, as search shows it in [brackets]
            keyword: a word or phrase to find in that passage
        """
        wanted = passage_id.strip().strip("[]").strip()
        titled = [p for p in shown.values() if p.title.lower() == wanted.lower()]
        passage = index.passage(wanted) or (titled[0] if titled else None)
        if passage is None:
            raise ValueError(f"no passage has the id {passage_id!r}; use an id that search showed")
        sentences = re.split(r"(?<=[.!?])\s+", passage.text)
        hits = [s for s in sentences if keyword.lower().strip() in s.lower()]
        if not hits:
            return ToolOutput(f"'{keyword}' does not occur in {passage.id} ({passage.title})")
        return ToolOutput(f"[{passage.id}] {passage.title}: " + " ".join(hits), (passage,))

    looking = make_tool(lookup)

    def lookup_schema() -> dict[str, Any]:
        ids = {"type": "string", "enum": list(shown)} if shown else {"type": "string"}
        properties = {**looking.parameters["properties"], "passage_id": ids}
        return {**looking.parameters, "properties": properties}

    return [
        make_tool(search),
        replace(looking, ready=lambda: bool(shown), live_schema=lookup_schema),
    ]


_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS = {"abs": abs, "round": round, "sqrt": math.sqrt, "min": min, "max": max}


def calculator(expression: str) -> str:
    """Evaluate arithmetic: numbers, + - * / // % **, parentheses, abs, round, sqrt, min, max.

    Args:
        expression: the arithmetic to compute, e.g. "(1871 - 1784) / 2"
    """
    if len(expression) > 200:
        raise ValueError("the expression is longer than 200 characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"not an arithmetic expression: {exc.msg}") from None
    value = _evaluate(tree.body)
    return str(int(value) if isinstance(value, float) and value.is_integer() else value)


def _evaluate(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 100:
            raise ValueError("exponent too large (at most 100)")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
    ):
        return _FUNCTIONS[node.func.id](*(_evaluate(a) for a in node.args))
    raise ValueError(f"only arithmetic is allowed, not {type(node).__name__}")


def today() -> str:
    """Today's date (ISO format, YYYY-MM-DD) and weekday."""
    now = dt.date.today()
    return f"{now.isoformat()} ({now.strftime('%A')})"


def general_tools() -> list[Tool]:
    return [make_tool(calculator), make_tool(today)]
