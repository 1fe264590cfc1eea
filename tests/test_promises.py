"""The "What ragteam promises" table (docs/promises.md) names the test behind each promise:
each named test must exist, so a promise cannot outlive the test that held it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_promise_names_tests_that_exist():
    page = (ROOT / "docs" / "promises.md").read_text(encoding="utf-8")
    section = page.split("# What ragteam promises", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) >= 8  # the header and the promises
    for row in rows[1:]:
        named = re.findall(r"`(test_\w+\.py)::(\w+)`", row)
        assert named, f"a promise without its test: {row[:60]}"
        for file, test in named:
            source = (ROOT / "tests" / file).read_text(encoding="utf-8")
            assert f"def {test}(" in source, f"{file}::{test} is named in docs/promises.md but gone"
