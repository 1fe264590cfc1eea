#!/usr/bin/env bash
# SMART's own benchmarks (docs/benchmarks.md section 15): PopQA, ARC-Challenge and PubHealth
# dev100, each over a hybrid index of its own corpus, the shipped SMART agent against OneR (and
# any strategies named in STRATEGIES). About 4 minutes a strategy and task on 2 CPU cores.
set -euo pipefail
OUT=${OUT:-bench/out}
STRATEGIES=${STRATEGIES:-smart oner}
for task in arc pubhealth popqa; do
    [ -d "$OUT/indexes/suite-$task" ] || ragteam index build "bench/data/suite/$task/corpus.jsonl" \
        --out "$OUT/indexes/suite-$task" --retriever hybrid --passage-words 0
    for s in $STRATEGIES; do
        ragteam eval --data "bench/data/suite/$task/dev100.jsonl" \
            --index "$OUT/indexes/suite-$task" -s "$s" --out "$OUT/runs/suite-$task-$s"
    done
    runs=()
    for s in $STRATEGIES; do runs+=("$OUT/runs/suite-$task-$s"); done
    ragteam report "${runs[@]}" --baseline oner
done
