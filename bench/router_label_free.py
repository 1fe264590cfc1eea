"""Issue 5, beyond the paper: route without the oracle complexity label.

    python bench/router_label_free.py --data tests/data/aqa --seeds 5

Compares, on the 51 AQA test questions: the paper's router on oracle labels, routers on
label-free question features (surface cues, with and without a PCA-reduced MiniLM embedding),
and the fixed policies always-IRCoT and always-OneR. F1 and mean summed ln(ms) per question.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from ragteam.router.features import OneHot, QuestionFeatures
from ragteam.router.reproduce import load
from ragteam.router.rewards import Reward
from ragteam.router.simulate import Setup, evaluate, train


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=Path("tests/data/aqa"))
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    train_set, test_set = load(args.data)
    print("| policy | reward | F1 (mean over seeds) | F1 min-max | cost | cost min-max |")
    print("|---|---|---|---|---|---|")
    policies = [
        ("oracle label (paper)", OneHot()),
        ("surface cues", QuestionFeatures(0)),
        ("surface + MiniLM PCA-4", QuestionFeatures(4)),
        ("surface + MiniLM PCA-8", QuestionFeatures(8)),
    ]
    for name, features in policies:
        features.fit(train_set)
        for reward in ("f1", "authors"):
            runs = [
                evaluate(train(train_set, features, Setup(reward=Reward(reward), seed=s)), test_set)
                for s in range(args.seeds)
            ]
            f1s, costs = [r.f1 for r in runs], [r.cost for r in runs]
            print(
                f"| {name} | {reward} | {statistics.mean(f1s):.4f} | {min(f1s):.4f}-"
                f"{max(f1s):.4f} | {statistics.mean(costs):.2f} | {min(costs):.2f}-"
                f"{max(costs):.2f} |"
            )
    router = train(train_set, OneHot(), Setup(reward=Reward("f1"), epochs=1))
    for agent in ("ircot", "oner", "nor"):
        index = router.actions.index((agent,))
        ev = evaluate(router, test_set, pick=lambda q, i=index: i)
        print(f"| always {agent} | - | {ev.f1:.4f} | - | {ev.cost:.2f} | - |")


if __name__ == "__main__":
    main()
