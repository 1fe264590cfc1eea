#!/usr/bin/env bash
# LoRA against full fine-tuning (issue 18, item 3): the same trajectories (the v4 build), the
# same 266 batches in the same order (seed 7), 0.25 epoch of whole trajectories from the
# embedded base; each method at its usual learning rate (LoRA 2e-4 as the SMART paper, full
# 5e-5 as run e2). Then both on the build's held-out open questions and the 100 seeded dev300
# questions, paired, with the locator's precision/recall and how long each takes to be ready.
# About 65 min of training and 15 min of evaluation on 2 CPU cores (docs/benchmarks.md 23).
set -euo pipefail
OUT=${OUT:-bench/out}
ragteam train fit --data "$OUT/traj-v4" --out "$OUT/cmp-full" --stage long --long-epochs 0.25 \
    --lr 5e-5 --seed 7 --threads 2
ragteam train fit --data "$OUT/traj-v4" --out "$OUT/cmp-lora" --stage long --long-epochs 0.25 \
    --lr 2e-4 --seed 7 --threads 2 --lora --lora-rank 16 --lora-alpha 32
for set in "heldout $OUT/heldout-open.jsonl $OUT/indexes/train-all-hybrid" \
    "seed0 $OUT/dev300-seed0-100.jsonl $OUT/indexes/hybrid"; do
    set -- $set
    ragteam eval --data "$2" --index "$3" -s smart --opt mode=trajectory \
        --model "$OUT/cmp-full/model.gguf" --out "$OUT/runs/$1-cmp-full"
    ragteam eval --data "$2" --index "$3" -s smart --lora "$OUT/cmp-lora/adapter.gguf" \
        --out "$OUT/runs/$1-cmp-lora"
    ragteam report "$OUT/runs/$1-cmp-lora" "$OUT/runs/$1-cmp-full" --baseline "$1-cmp-full/smart"
done
python bench/smart_locator.py "$OUT/runs/seed0-cmp-lora" "$OUT/runs/seed0-cmp-full" \
    --data "$OUT/dev300-seed0-100.jsonl"
python bench/load_time.py --lora "$OUT/cmp-lora/adapter.gguf"
python bench/load_time.py --model "$OUT/cmp-full/model.gguf"
