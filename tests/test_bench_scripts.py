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
