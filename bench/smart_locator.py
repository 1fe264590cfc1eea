"""How SMART's fact locator judged passages, against the gold paragraphs, from a run's traces.

    python bench/smart_locator.py bench/out/runs/seed0-trained \
        --data bench/out/dev300-seed0-100.jsonl

For every `smart` row: the passages it showed the locator (the retrieval steps, deduplicated in
order, cut to `max_passages` in trajectory mode), the judgements in the trajectory note, and the
question's gold paragraphs (`supporting_ids`). Prints the locator's parse-failure rate (per call)
and the precision and recall of "relevant" against gold, plus the relevant share.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from ragteam.eval.datasets import load_dataset
from ragteam.eval.rundir import RunDir
from ragteam.smart.format import parse


def shown_passages(steps: list[dict], note: dict | None, limit: int | None) -> list[str]:
    """Document ids of passages [1]..[n] as the locator saw them: the trajectory note's ids
    (recorded since the block can be filled), else each shown title's first retrieved hit, else
    the retrieved hits deduplicated in order (cut to `limit`)."""
    if note and "passage_ids" in note["meta"]:
        return list(note["meta"]["passage_ids"])
    hits: dict[str, str] = {}
    for step in steps:
        if step["kind"] == "retrieve":
            for hit in step["output"]:
                hits.setdefault(hit.get("doc_id") or hit["id"], hit.get("title", ""))
    if note:
        by_title: dict[str, str] = {}
        for doc, title in hits.items():
            by_title.setdefault(title, doc)
        titles = [title for title, _text in parse(note["meta"]["trajectory"]).passages]
        if all(t in by_title for t in titles):
            return [by_title[t] for t in titles]
    ids = list(hits)
    return ids[:limit] if limit else ids


def ran_trajectory(row: dict) -> bool:
    """Whether the row's smart ran in trajectory mode (the mode note; older runs: none)."""
    notes = [s for s in row["trace"]["steps"] if s.get("meta", {}).get("event") == "mode"]
    return bool(notes) and notes[-1]["meta"].get("mode") == "trajectory"


def analyse(rows: list[dict], gold: dict[str, set[str]], limit: int | None) -> dict[str, float]:
    calls = failed = judged = relevant = true_pos = gold_shown = 0
    for row in rows:
        steps = row["trace"]["steps"]
        row_limit = limit if limit is not None else (6 if ran_trajectory(row) else None)
        locator = [s for s in steps if s["kind"] == "llm" and s["role"] == "locator"]
        calls += len(locator)
        failed += sum(1 for s in locator if s["parse_failures"])
        notes = [s for s in steps if s["kind"] == "note" and "trajectory" in s.get("meta", {})]
        if not notes:
            continue
        ids = shown_passages(steps, notes[-1], row_limit)
        wanted = gold.get(row["id"], set())
        gold_shown += len(wanted & set(ids))
        for j in parse(notes[-1]["meta"]["trajectory"]).judgements:
            if not 0 < j.index <= len(ids):
                continue
            judged += 1
            if j.relevant:
                relevant += 1
                true_pos += ids[j.index - 1] in wanted
    return {
        "questions": len(rows),
        "locator_calls": calls,
        "locator_parse_failure_rate": round(failed / max(1, calls), 3),
        "judgements": judged,
        "relevant_share": round(relevant / max(1, judged), 3),
        "relevant_precision": round(true_pos / max(1, relevant), 3),
        "relevant_recall_of_gold_shown": round(true_pos / max(1, gold_shown), 3),
    }


def by_position(rows: list[dict], gold: dict[str, set[str]]) -> dict[str, str]:
    """Per passage number [n]: how often the locator judged it relevant (of the blocks that
    had an [n]), and how many of the gold passages shown there it located. A locator that
    reads position instead of text judges [1] relevant every time."""
    judged, shown = Counter(), Counter()
    gold_at, located = Counter(), Counter()
    for row in rows:
        steps = row["trace"]["steps"]
        notes = [s for s in steps if s["kind"] == "note" and "trajectory" in s.get("meta", {})]
        if not notes:
            continue
        ids = shown_passages(steps, notes[-1], 6 if ran_trajectory(row) else None)
        relevant = {
            j.index for j in parse(notes[-1]["meta"]["trajectory"]).judgements if j.relevant
        }
        for n, doc in enumerate(ids, start=1):
            shown[n] += 1
            judged[n] += n in relevant
            if doc in gold.get(row["id"], set()):
                gold_at[n] += 1
                located[n] += n in relevant
    return {
        f"[{n}]": f"relevant {judged[n]}/{shown[n]}, gold located {located[n]}/{gold_at[n]}"
        for n in sorted(shown)
    }


def answer_sources(rows: list[dict]) -> dict[str, int]:
    """Where each wrong answer's gold went missing: never retrieved, retrieved but not located
    as a fact, or located but not chosen by the generator (gold text matched after SQuAD
    normalisation); and how many predictions were copied from the passages or facts."""
    from ragteam.common.metrics import normalize_answer

    counts = dict.fromkeys(
        (
            "f1_at_least_half",
            "pred_copied_from_passages",
            "pred_copied_from_facts",
            "wrong_gold_not_retrieved",
            "wrong_gold_retrieved_not_located",
            "wrong_gold_located_not_answered",
        ),
        0,
    )
    for row in rows:
        notes = [s for s in row["trace"]["steps"] if "trajectory" in s.get("meta", {})]
        if not notes:
            continue
        t = parse(notes[-1]["meta"]["trajectory"])
        shown = normalize_answer(" ".join(text for _title, text in t.passages))
        facts = normalize_answer(" ".join(j.fact for j in t.judgements if j.relevant))
        golds = [g for g in (normalize_answer(a) for a in row["answers"]) if g]
        pred = normalize_answer(row["prediction"])
        counts["pred_copied_from_passages"] += bool(pred) and pred in shown
        counts["pred_copied_from_facts"] += bool(pred) and pred in facts
        if row["metrics"]["f1"] >= 0.5:
            counts["f1_at_least_half"] += 1
        elif any(g in facts for g in golds):
            counts["wrong_gold_located_not_answered"] += 1
        elif any(g in shown for g in golds):
            counts["wrong_gold_retrieved_not_located"] += 1
        else:
            counts["wrong_gold_not_retrieved"] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--data", type=Path, required=True)
    args = parser.parse_args()
    gold = {e.id: set(e.supporting_ids) for e in load_dataset(args.data)}
    for run in args.runs:
        rundir = RunDir(run)
        options = rundir.config().get("strategies", {}).get("smart", {})
        # trajectory mode shows the locator the first max_passages; mode auto: per row
        limit = options.get("max_passages", 6) if options.get("mode") == "trajectory" else None
        rows = [r for r in rundir.results() if r["strategy"] == "smart"]
        print(run, json.dumps({**analyse(rows, gold, limit), **answer_sources(rows)}))
        print("  by position:", json.dumps(by_position(rows, gold)))


if __name__ == "__main__":
    main()
