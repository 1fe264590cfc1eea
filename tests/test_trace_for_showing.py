"""The trace is for people and the page: package code takes what it needs from typed fields
(`Answer.applied`, ...), never by reading trace events back (issue 68). The events already
moved off the trace are held to it here, so none comes back."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ragteam"
# events whose facts now travel on the answer: written to the trace for showing, read nowhere
MOVED = ("instructions", "temperature", "label_from_text")


def test_no_package_code_reads_the_moved_events_back_from_a_trace():
    readers = re.compile(r"""meta(?:\.get\(|\[)\s*["']event["']\)?\s*\]?\s*==\s*["'](\w+)["']""")
    found = [
        f"{path.relative_to(PACKAGE)}: {match.group(0)}"
        for path in PACKAGE.rglob("*.py")
        for match in readers.finditer(path.read_text(encoding="utf-8"))
        if match.group(1) in MOVED
    ]
    assert found == []


def test_the_guard_sees_a_read_back():
    """The pattern above finds the form this code had (so the guard is not blind)."""
    readers = re.compile(r"""meta(?:\.get\(|\[)\s*["']event["']\)?\s*\]?\s*==\s*["'](\w+)["']""")
    old = 'any(s.meta.get("event") == "instructions" for s in answer.trace.steps)'
    assert [m.group(1) for m in readers.finditer(old)] == ["instructions"]
