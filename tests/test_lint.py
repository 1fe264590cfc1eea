"""The house's lint rules (pyproject's [tool.ruff]) hold on every file CI checks out: the test
command is the only gate CI runs, so lint lives in it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing_in_the_package_tests_and_benchmarks():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (it comes with the `test` extra)")
    found = subprocess.run(
        [ruff, "check", "--no-cache", "ragteam", "tests", "bench"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert found.returncode == 0, found.stdout + found.stderr


def test_no_function_of_the_package_is_over_60_lines_nor_a_file_over_about_400():
    import ast

    long_functions, long_files = [], []
    for path in sorted((ROOT / "ragteam").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > 420:
            long_files.append(f"{path.relative_to(ROOT)}: {len(text.splitlines())}")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > 60:
                    long_functions.append(f"{path.relative_to(ROOT)}:{node.name}: {lines}")
    assert long_functions == [] and long_files == [], long_functions + long_files
