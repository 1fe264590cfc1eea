"""The trace is for people (the page, `--trace`, the MCP reply's step list, eval's records):
no package code reads its steps back to learn what happened. What the team did travels as
typed facts instead (`Answer.work`, the trace's `tally`, `Answer.applied`)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ragteam"
# the modules that show a trace: its own, the terminal's view, the MCP reply's step list
SHOWING = {"trace.py", "commands/render.py", "server/mcp_app.py"}


def steps_read(tree: ast.AST) -> list[int]:
    """Lines where a trace's `steps` are read (`x.trace.steps`, `trace.steps`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "steps":
            owner = node.value
            name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
            if "trace" in name.lower():
                found.append(node.lineno)
    return found


def test_no_package_code_reads_the_trace_back():
    readers = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if where in SHOWING:
            continue
        lines = steps_read(ast.parse(path.read_text(encoding="utf-8")))
        if lines:
            readers[where] = lines
    assert readers == {}


def test_the_check_sees_a_trace_read_back():
    source = "def f(answer, ctx):\n    a = answer.trace.steps\n    return ctx.trace.steps[0]\n"
    assert steps_read(ast.parse(source)) == [2, 3]
