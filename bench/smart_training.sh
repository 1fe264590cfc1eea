#!/usr/bin/env bash
# SMART trajectory learning, end to end, as measured in docs/benchmarks.md (section 9).
# About 45 min of training and 1.5 h of evaluation on 2 CPU cores.
set -euo pipefail
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
# Training data: an index of the training corpus (never the test corpus), then trajectories.
ragteam index build bench/data/train/train_corpus.jsonl --out "$OUT/indexes/train-bm25" \
    --retriever bm25 --passage-words 0
ragteam train build --data bench/data/train/hotpotqa_train.jsonl \
    --data bench/data/train/musique_train.jsonl --index "$OUT/indexes/train-bm25" \
    --out "$OUT/traj" --exclude bench/data/hotpotqa/dev300.jsonl --skip-unsupported
ragteam train fit --data "$OUT/traj" --out "$OUT/smart-135m" --short-roles reconstructor \
    --epochs 1 --long-epochs 0.85 --lr 1e-4 --threads 2
# Evaluation: the 100 seeded dev300 questions of benchmark 7, hybrid index of the test corpus.
python bench/subset.py bench/data/hotpotqa/dev300.jsonl --n 100 --seed 0 \
    --out "$OUT/dev300-seed0-100.jsonl"
ragteam index build bench/data/hotpotqa/corpus.jsonl --out "$OUT/indexes/hybrid" \
    --retriever hybrid --passage-words 0
ragteam eval --data "$OUT/dev300-seed0-100.jsonl" --index "$OUT/indexes/hybrid" -s smart \
    --opt smart.mode=trajectory --model "$OUT/smart-135m/model.gguf" \
    --out "$OUT/runs/seed0-smart-trained"
for s in oner smart; do
    ragteam eval --data "$OUT/dev300-seed0-100.jsonl" --index "$OUT/indexes/hybrid" -s "$s" \
        --out "$OUT/runs/seed0-$s"
done
ragteam report "$OUT/runs/seed0-smart-trained" "$OUT/runs/seed0-oner" "$OUT/runs/seed0-smart" \
    --baseline oner
python bench/smart_locator.py "$OUT/runs/seed0-smart-trained" "$OUT/runs/seed0-smart" \
    --data "$OUT/dev300-seed0-100.jsonl"
