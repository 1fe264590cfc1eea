"""Multi-agent latency on the embedded model with llama.cpp speed-ups off, then on.

Same questions, same strategy, LLM cache off, temperature 0. Reports seconds a question, where
they go (llama.cpp's own prompt/generation timers), and whether every step's output is identical.

    python bench/multiagent_speed.py --data bench/out/dev300-seed0-100.jsonl \
        --index bench/out/indexes/hybrid -s smart,marag --n 30 --out bench/out/multiagent-speed.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from ragteam import answer
from ragteam.llm import ModelOptions, load_model
from ragteam.retrieval.index import load_index


def run(strategy: str, questions: list[dict], index, speedups: bool) -> dict:  # noqa: ANN001
    # a fresh model: no KV of the previous run
    model = load_model("embedded", ModelOptions(cache=False, speedups=speedups))
    model.timings(reset=True)
    seconds, outputs, answers = [], [], []
    for q in questions:
        started = time.perf_counter()
        result = answer(q["question"], index=index, strategy=strategy, model=model)
        seconds.append(time.perf_counter() - started)
        answers.append(result.text)
        outputs.append([s.output for s in result.trace.steps if s.kind == "llm"])
    perf = model.timings()
    n = len(questions)
    return {
        "speedups": speedups,
        "s_per_q": statistics.mean(seconds),
        "p50": statistics.median(seconds),
        "prompt_tokens_evaluated_per_q": perf["prompt_tokens"] / n,
        "prompt_eval_s_per_q": perf["prompt_seconds"] / n,
        "generated_tokens_per_q": perf["generated_tokens"] / n,
        "generation_s_per_q": perf["generation_seconds"] / n,
        "answers": answers,
        "step_outputs": outputs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--index", required=True)
    parser.add_argument("-s", "--strategies", default="smart,marag")
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    lines = Path(args.data).read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line) for line in lines if line.strip()][: args.n]
    index = load_index(args.index)
    report = {}
    for strategy in args.strategies.split(","):
        before = run(strategy, questions, index, speedups=False)
        after = run(strategy, questions, index, speedups=True)
        same_answers = sum(a == b for a, b in zip(before["answers"], after["answers"], strict=True))
        same_steps = sum(
            a == b for a, b in zip(before["step_outputs"], after["step_outputs"], strict=True)
        )
        report[strategy] = {
            "n": len(questions),
            "before": {k: v for k, v in before.items() if k != "step_outputs"},
            "after": {k: v for k, v in after.items() if k != "step_outputs"},
            "speedup": before["s_per_q"] / after["s_per_q"],
            "identical_answers": same_answers,
            "identical_step_outputs": same_steps,
        }
        row = report[strategy]
        print(
            f"{strategy}: {before['s_per_q']:.2f} -> {after['s_per_q']:.2f} s/q "
            f"({row['speedup']:.2f}x); identical answers {same_answers}/{len(questions)}, "
            f"identical step outputs {same_steps}/{len(questions)}",
            flush=True,
        )
    Path(args.out).write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
