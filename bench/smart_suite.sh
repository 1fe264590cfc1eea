#!/usr/bin/env bash
# SMART's own benchmarks (docs/benchmarks.md sections 16, 18d, 19): PopQA, ARC-Challenge and
# PubHealth dev100, each over a hybrid index of its own corpus, the shipped SMART agent against
# OneR and any strategies named in STRATEGIES (specs of bench/run_strategies.sh, e.g.
# "smart-modular=smart,mode=modular"). About 4 minutes a strategy and task on 2 CPU cores.
set -euo pipefail
OUT=${OUT:-bench/out}
STRATEGIES=${STRATEGIES:-smart oner}
TASKS=${TASKS:-arc pubhealth popqa}
for task in $TASKS; do
    [ -d "$OUT/indexes/suite-$task" ] || ragteam index build "bench/data/suite/$task/corpus.jsonl" \
        --out "$OUT/indexes/suite-$task" --retriever hybrid --passage-words 0
    # shellcheck disable=SC2086
    bash bench/run_strategies.sh "bench/data/suite/$task/dev100.jsonl" "$OUT/indexes/suite-$task" \
        "$OUT/runs/suite-$task" $STRATEGIES
    runs=()
    for s in $STRATEGIES; do runs+=("$OUT/runs/suite-$task-${s%%=*}"); done
    ragteam report "${runs[@]}" --baseline oner
done
