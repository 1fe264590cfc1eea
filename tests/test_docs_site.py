"""The front door (issue 90): a README a newcomer reads in minutes, whose set-up commands are
the ones CI runs, and a docs site that builds with `mkdocs build --strict` (a broken link or
page fails), offline, its CLI and HTTP references generated from the code."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _commands(text: str) -> list[str]:
    """The README's bash blocks, each with its continued lines joined."""
    blocks = re.findall(r"```bash\n(.*?)```", text, re.DOTALL)
    return [" ".join(re.sub(r"\\\n\s*", " ", b).split()) for b in blocks]


def test_the_readme_is_short_and_its_set_up_commands_are_cis():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 150, len(lines)
    assert max(len(line) for line in lines) <= 120
    first_answer = next(n for n, line in enumerate(lines, 1) if "ragteam ask" in line)
    assert first_answer <= 50, first_answer
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    tests = next(c for c in _commands(text) if c.endswith("python -m pytest"))
    assert tests in " ".join(ci.split()), "the README's test command is not the one CI runs"
    main = next(c for c in _commands(text) if c.endswith("ragteam demo"))
    assert main == tests.replace('".[test]" && python -m pytest', ". && ragteam demo")
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / link).is_file(), f"the README links to {link}, which is not there"


def test_the_docs_site_builds_strict_with_generated_references(tmp_path):
    if shutil.which("mkdocs") is None:
        pytest.skip("mkdocs is not installed (it comes with the `test` and `docs` extras)")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    cli = (tmp_path / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "ragteam index sync" in cli and "--follow" in cli  # from the commands themselves
    http = (tmp_path / "reference" / "http" / "index.html").read_text(encoding="utf-8")
    assert "/v1/answer/stream" in http and "/v1/indexes/{name}/documents/{filename}" in http
    assert "fonts.googleapis.com" not in (tmp_path / "index.html").read_text(encoding="utf-8")
