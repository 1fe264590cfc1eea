#!/usr/bin/env bash
# Evaluate several strategies on one dataset and index, one run folder each (resumable: a run
# folder keeps its results and `ragteam eval` skips what is done).
#   bash bench/run_strategies.sh DATA INDEX PREFIX SPEC...
# SPEC is NAME or NAME=STRATEGY[,KEY=VALUE...]: "oner", "smart-modular=smart,mode=modular".
# Each writes PREFIX-NAME (e.g. bench/out/runs/seed0-oner).
set -euo pipefail
data=$1 index=$2 prefix=$3
shift 3
for spec in "$@"; do
    name=${spec%%=*}
    strategy=$name opts=()
    if [[ $spec == *=* ]]; then
        IFS=, read -r -a parts <<< "${spec#*=}"
        strategy=${parts[0]}
        for kv in "${parts[@]:1}"; do opts+=(--opt "$kv"); done
    fi
    ragteam eval --data "$data" --index "$index" -s "$strategy" ${opts[@]+"${opts[@]}"} \
        --out "$prefix-$name"
done
