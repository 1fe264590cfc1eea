"""The time a sync spends reading files in a child interpreter (documents/isolated.py) against
reading them in its own process: one folder synced from an empty cache (BM25, nothing
embedded), each way, `--runs` times alternating.

    python bench/isolation_cost.py /tmp/docqa/docs --runs 2"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ONE = """
import os, sys, tempfile, time
from pathlib import Path
from ragteam.retrieval import sync_folder
from ragteam.retrieval.index import IndexSettings
from ragteam.documents import CONVERTERS
if sys.argv[2] == "in-process":
    for name in CONVERTERS.names():
        CONVERTERS.load(name).isolated = False
began = time.perf_counter()
report = sync_folder(Path(sys.argv[1]), Path(tempfile.mkdtemp()) / "ix",
                     index=IndexSettings(retriever="bm25"))
print(f"{sys.argv[2]}: {time.perf_counter() - began:.1f} s, "
      f"{report.count('read')} of {len(report.files)} files read")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    for _ in range(args.runs):
        for mode in ("child", "in-process"):
            env = {**os.environ, "XDG_CACHE_HOME": tempfile.mkdtemp()}  # an empty cache
            done = subprocess.run(
                [sys.executable, "-c", ONE, str(args.folder), mode],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            print(done.stdout.strip())


if __name__ == "__main__":
    main()
