"""Do two runs of the same questions give the same answers? For a refactor that must not change
them: run `ragteam eval` with the old code and then the new code into two folders, sharing one
LLM cache (XDG_CACHE_HOME), and compare. A call the new code makes with other words, settings
or model than the old one misses the cache, so `hits == calls` says that every prompt was the
same byte for byte; `same` counts rows with the same answer, citations and grounding label.

    python bench/same_answers.py OLD_RUNS NEW_RUNS nor oner ircot smart marag smurfs adaptive

(OLD_RUNS/STRATEGY/results.jsonl and NEW_RUNS/STRATEGY/results.jsonl.)"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def rows(path: Path) -> dict[str, dict]:
    with path.open(encoding="utf-8") as handle:
        return {r["id"]: r for r in map(json.loads, handle)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("strategies", nargs="+")
    args = parser.parse_args()
    print("| strategy | questions | same answer, citations, grounding | calls | cache hits |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name in args.strategies:
        old, new = rows(args.old / name / "results.jsonl"), rows(args.new / name / "results.jsonl")
        keys = ("prediction", "citations", "grounding", "error")
        same = sum(1 for i, r in old.items() if i in new and all(new[i][k] == r[k] for k in keys))
        calls = sum(r["cost"]["llm_calls"] for r in new.values())
        hits = sum(r["cost"]["cache_hits"] for r in new.values())
        print(f"| {name} | {len(old)} | {same} | {calls:.0f} | {hits:.0f} |")


if __name__ == "__main__":
    main()
