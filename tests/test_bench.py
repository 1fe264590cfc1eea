"""Every bench script still starts: its imports resolve and `--help` prints its usage (two of
them called `load_passages` with an argument it no longer takes, and nothing noticed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"

# run in one interpreter, so the package is imported once for all of them
CHECK = """
import contextlib, io, json, runpy, sys
sys.path.insert(0, sys.argv[1])
failed = {}
for path in sys.argv[2:]:
    sys.argv = [path, "--help"]
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            runpy.run_path(path, run_name="__main__")
        failed[path] = "ran on without printing its usage"
    except SystemExit as stop:
        if stop.code not in (0, None) or "usage" not in said.getvalue().lower():
            failed[path] = f"exit {stop.code}: {said.getvalue()[-400:]}"
    except Exception as exc:
        failed[path] = f"{type(exc).__name__}: {exc}"
print(json.dumps(failed))
"""


def test_every_bench_script_imports_and_prints_its_usage():
    scripts = sorted(
        str(p) for p in BENCH.glob("*.py") if 'if __name__ == "__main__"' in p.read_text()
    )
    assert len(scripts) > 40
    done = subprocess.run(
        [sys.executable, "-c", CHECK, str(BENCH), *scripts],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "{}", done.stdout[-3000:]
