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
