"""Run the `ragteam` CLI in a child process whose files cannot grow past a size (RLIMIT_FSIZE):
a write past it fails with EFBIG as a full disk fails with ENOSPC, in the real write path."""

from __future__ import annotations

import os
import subprocess
import sys

CHILD = """
import resource, signal, sys
limit = int(sys.argv[1])
if limit >= 0:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # fail the write instead of killing us
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.argv = ["ragteam", *sys.argv[2:]]
from ragteam.cli import app
app()
"""


def run_limited(argv: list[str], max_file_bytes: int | None) -> subprocess.CompletedProcess:
    limit = -1 if max_file_bytes is None else max_file_bytes
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(limit), *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env={"COLUMNS": "200", **os.environ},
    )
