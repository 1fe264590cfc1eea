"""Kill -9 during index segment writes and merges (issue 89, faults): after each kill the index
loads, holds every passage once (the set before the sync or the set after it, never a mix),
and the next sync finishes clean; at the end the index ranks as one written fresh.

    python bench/segment_kills.py --corpus ../shared/data/train/train_corpus.jsonl \\
        --files 2000 --paragraphs 10 --work /tmp/kills [--trials 10]

A folder of `--files` files (`bench/folder_scale.py`'s) synced once (BM25). Then, `--trials`
times for a segment write and as many for a merge (`index sync --merge`): a few files changed (a
line appended), one deleted and one added; the sync started in its own process and killed with
SIGKILL at a point spread from 30% to 85% of the time the same kind of sync took uninterrupted
(the first part is imports); then the index loaded in a fresh process (its passage ids: none
twice; the set equals the one before or the one after), the sync run again to its end, and once
more (it must find nothing to do). Last, an index written fresh from the folder and 200 queries
compared (`segments_scale`'s check). Results as JSON lines on stdout; the exit status is 1 when
any trial failed."""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from folder_scale import make_folder  # noqa: E402
from segments_scale import against_fresh  # noqa: E402

IDS = """
import hashlib, json, sys
from ragteam.retrieval import load_index
index = load_index(sys.argv[1])
ids = [p.id for p in index.passages]
print(json.dumps({"count": len(ids), "unique": len(set(ids)),
                  "digest": hashlib.sha256("\\n".join(sorted(ids)).encode()).hexdigest()}))
"""
NOTHING = re.compile(r": 0 new, 0 changed, 0 renamed, 0 deleted")


def sync_command(folder: Path, out: Path, extra: list[str]) -> list[str]:
    command = [sys.executable, "-m", "ragteam", "index", "sync", str(folder), "--out", str(out)]
    return [*command, "--retriever", "bm25", *extra]


def run_sync(folder: Path, out: Path, env: dict[str, str], extra: list[str]) -> str:
    done = subprocess.run(sync_command(folder, out, extra), env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"sync failed: {(done.stdout + done.stderr)[-2000:]}")
    return done.stdout + done.stderr


def killed_sync(
    folder: Path, out: Path, env: dict[str, str], extra: list[str], after: float
) -> bool:
    """A sync killed with SIGKILL `after` seconds; False when it ended before."""
    process = subprocess.Popen(
        sync_command(folder, out, extra),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        process.wait(after)
        return False
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        return True


def passage_ids(out: Path, env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", IDS, str(out)], env=env, capture_output=True, text=True
    )
    if done.returncode:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def change(files: list[Path], rng: random.Random, trial: int) -> None:
    """A few files changed, one deleted, one added (named after the trial)."""
    for path in rng.sample([f for f in files if f.exists()], 5):
        path.write_text(path.read_text("utf-8") + f"\nLine of trial {trial}.\n", "utf-8")
    rng.choice([f for f in files if f.exists()]).unlink()
    donor = rng.choice([f for f in files if f.exists()])
    (donor.parent / f"added-{trial}.txt").write_text(
        f"# Added in trial {trial}\n\n" + donor.read_text("utf-8"), "utf-8"
    )


def trial(
    folder: Path, out: Path, env: dict[str, str], extra: list[str], at: float, n: int
) -> dict[str, object]:
    before = passage_ids(out, env)
    change(sorted(folder.rglob("*.txt")), random.Random(n), n)
    was_killed = killed_sync(folder, out, env, extra, at)
    middle = passage_ids(out, env)
    run_sync(folder, out, env, extra)
    after = passage_ids(out, env)
    again = run_sync(folder, out, env, [])
    ok = (
        "error" not in middle
        and middle.get("count") == middle.get("unique")
        and middle.get("digest") in (before.get("digest"), after.get("digest"))
        and after.get("count") == after.get("unique")
        and bool(NOTHING.search(again))
    )
    state = "before" if middle.get("digest") == before.get("digest") else "after"
    if "error" in middle:
        state = middle["error"]
    return {"trial": n, "kill_at_s": round(at, 2), "killed": was_killed, "state": state, "ok": ok}


def timed(folder: Path, out: Path, env: dict[str, str], extra: list[str], n: int) -> float:
    """How long the same kind of sync takes uninterrupted (its change is a trial's)."""
    change(sorted(folder.rglob("*.txt")), random.Random(n), n)
    began = time.perf_counter()
    run_sync(folder, out, env, extra)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--paragraphs", type=int, default=10)
    parser.add_argument("--work", type=Path, default=Path("/tmp/kills"))
    parser.add_argument("--trials", type=int, default=10)
    args = parser.parse_args()
    folder, out, fresh = args.work / "docs", args.work / "ix", args.work / "fresh"
    env = {**os.environ, "XDG_CACHE_HOME": str(args.work / "cache")}
    shutil.rmtree(args.work, ignore_errors=True)
    make_folder(args.corpus, folder, args.files, args.paragraphs)
    run_sync(folder, out, env, [])
    failed = 0
    for name, extra, base in (("segment", [], 1000), ("merge", ["--merge"], 2000)):
        took = timed(folder, out, env, extra, base)
        print(json.dumps({"kind": name, "uninterrupted_s": round(took, 2)}), flush=True)
        for n in range(args.trials):
            at = took * (0.3 + 0.55 * (n + random.Random(base + n).random()) / args.trials)
            result = trial(folder, out, env, extra, at, base + 1 + n)
            failed += not result["ok"]
            print(json.dumps({"kind": name, **result}), flush=True)
    print(against_fresh(folder, out, fresh, env)[1], flush=True)
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
