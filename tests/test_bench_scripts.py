"""Every benchmark script stands on the package's public surface: each one imports and answers
`--help` (a script broken by a changed signature, or reaching for a name that moved, fails
here, not in front of the next person who runs it). Run in this process: imports are shared."""

from __future__ import annotations

import contextlib
import io
import runpy
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
SCRIPTS = sorted(p for p in BENCH.glob("*.py"))


def test_there_are_bench_scripts_to_check():
    assert len(SCRIPTS) > 40 and BENCH / "docqa_dev.py" in SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_a_bench_script_imports_and_answers_help(script: Path, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))  # scripts import their siblings (doc_answers, ...)
    runs = '__name__ == "__main__"' in script.read_text(encoding="utf-8")
    monkeypatch.setattr(sys, "argv", [str(script), "--help"])
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        if not runs:  # a module the others import: importing it is its check
            runpy.run_path(str(script), run_name=script.stem)
            return
        with pytest.raises(SystemExit) as exited:
            runpy.run_path(str(script), run_name="__main__")
    assert exited.value.code in (0, None), shown.getvalue()
    assert "usage:" in shown.getvalue().lower()


def _private_reads(source: str) -> list[str]:
    """`x._name` reads where x is not `self` or `cls` (dunders aside)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        ):
            found.append(f"{node.lineno}: .{node.attr}")
    return found


def test_the_private_attribute_finder_sees_one():
    assert _private_reads("model._llm.reset()\nself._x = 1\nx.__dict__") == ["1: ._llm"]


def test_no_bench_script_reads_a_private_attribute():
    reads = {p.name: _private_reads(p.read_text(encoding="utf-8")) for p in SCRIPTS}
    assert {name: found for name, found in reads.items() if found} == {}
