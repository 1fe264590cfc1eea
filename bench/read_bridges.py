"""Two ways `read` could answer a two-hop question better than by its best span over the
passages of both searches, measured on HotpotQA *training* questions (never dev):

- composed: each passage the second search brings is read with the sentence of the bridge
  span that brought it in front ("X was directed by Y." + the passage about Y), so that one
  window holds both hops (instead of the plain passage; or beside it; or every passage of the
  second search composed, not only the new ones);
- switch: when the best span is itself a bridge read in the first search's passages, answer
  with the best other span read in the second search's passages instead, if its probability
  is at least `t` times the best's; with the oracle (the better of the two, by F1) as its
  ceiling.

    python bench/read_bridges.py --questions bench/data/train/hotpotqa_train.jsonl \\
        --index /tmp/train-ix

docs/benchmarks.md §46."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from ragteam.common.metrics import f1_score, normalize_answer
from ragteam.reader import BRIDGE_SPANS, Span, load_reader
from ragteam.reader.training.data import held_out
from ragteam.retrieval import load_index
from ragteam.types import Passage

K, BRIDGES = 5, 2  # read's defaults
RATIOS = (0.05, 0.1, 0.3)


def composed(p: Passage, bridge: Span) -> Passage:
    return replace(p, id=f"{p.id}+{bridge.passage_id}", text=f"{bridge.sentence.strip()} {p.text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--index", type=Path, required=True)
    args = parser.parse_args()
    index, reader = load_index(args.index), load_reader()
    rows = [json.loads(x) for x in args.questions.read_text(encoding="utf-8").splitlines() if x]
    scores: dict[str, list[tuple[bool, float]]] = {}

    def score(name: str, text: str, r: dict) -> float:
        value = f1_score(text, r["answers"]) if text else 0.0
        scores.setdefault(name, []).append((held_out(r["id"], 0.1), value))
        return value

    for r in rows:
        q = r["question"]
        found = index.retrieve(q, K, None)
        bridges = reader.read(q, found, top=BRIDGE_SPANS).bridges(BRIDGES)
        seen, new, new_composed, all_composed = {p.id for p in found}, [], [], []
        for b in bridges:
            for p in index.retrieve(f"{q} {b.text}", K, None):
                if p.id != b.passage_id and len(all_composed) < 2 * K:
                    all_composed.append(composed(p, b))
                if p.id not in seen and len(new) < K:
                    seen.add(p.id)
                    new.append(p)
                    new_composed.append(composed(p, b))
        variants = {
            "read (hops=2)": found + new,
            "composed instead": found + new_composed,
            "composed beside": found + new + new_composed,
            "all composed beside": found + new + all_composed,
        }
        full = None
        for name, passages in variants.items():
            reading = reader.read(q, passages, top=30)
            full = full or reading
            score(name, reading.best.text if reading.best else "", r)
        bridge_words = {normalize_answer(b.text) for b in bridges}
        switch_scores(full, {p.id for p in found}, {p.id for p in new}, bridge_words, r, score)
    print("| variant | F1 (600) | F1, held questions |\n|---|---|---|")
    for name, values in scores.items():
        held = [v for h, v in values if h]
        mean = sum(v for _, v in values) / len(values)
        print(f"| {name} | {mean:.3f} | {sum(held) / max(1, len(held)):.3f} ({len(held)}) |")


def switch_scores(full, first: set[str], second: set[str], bridges: set[str], r, score) -> None:  # noqa: ANN001
    best = full.best
    if best is None:
        for name in ["switch oracle", *(f"switch t={t}" for t in RATIOS)]:
            score(name, "", r)
        return
    said = normalize_answer(best.text)
    other = next(
        (
            s
            for s in full.spans
            if s.kind == "span"
            and s.passage_id in second
            and normalize_answer(s.text) not in bridges | {said}
        ),
        None,
    )
    is_bridge = best.passage_id in first and said in bridges
    own = f1_score(best.text, r["answers"])
    alt = f1_score(other.text, r["answers"]) if other else 0.0
    score("switch oracle", best.text if own >= alt else other.text, r)
    for t in RATIOS:
        switch = is_bridge and other is not None and other.score >= t * best.score
        score(f"switch t={t}", other.text if switch else best.text, r)


if __name__ == "__main__":
    main()
