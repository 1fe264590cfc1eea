"""Benchmark 1: prompt-processing and decode speed of the embedded model on this machine.

python bench/model_speed.py [--model embedded] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

from ragteam.llm.llamacpp import LlamaCppModel

FILLER = (
    "The Halvard Archipelago is a chain of seven islands in the cold Northern Sound, known for "
    "its lighthouses, its herring fleets and the annual Lantern Regatta. "
)


def timed(model: LlamaCppModel, prompt: str, max_tokens: int) -> tuple[float, int, int]:
    model._llm.reset()  # no prefix reuse between runs: measure the full prompt every time
    started = time.perf_counter()
    out = model._llm.create_completion(prompt, max_tokens=max_tokens, temperature=0.0)
    seconds = time.perf_counter() - started
    usage = out["usage"]
    return seconds, usage["prompt_tokens"], usage["completion_tokens"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=None, help="GGUF path (default: embedded)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--decode-tokens", type=int, default=128)
    args = parser.parse_args()
    model = LlamaCppModel(args.model, n_ctx=2048)
    long_prompt = FILLER * 20
    timed(model, "warm up", 4)
    pp, dec = [], []
    for _ in range(args.repeats):
        seconds, prompt_tokens, _ = timed(model, long_prompt, 1)
        pp.append(prompt_tokens / seconds)
        short = "Write a long story about a lighthouse keeper.\n"
        prefill, _, _ = timed(model, short, 1)
        seconds, _, produced = timed(model, short, args.decode_tokens)
        dec.append((produced - 1) / max(seconds - prefill, 1e-9))
    print(f"model: {model.path.name}, threads: {model._llm.n_threads}")
    print(
        f"prompt processing: {statistics.median(pp):.0f} tok/s "
        f"({prompt_tokens}-token prompt, median of {args.repeats})"
    )
    print(
        f"decode: {statistics.median(dec):.1f} tok/s "
        f"({args.decode_tokens} tokens, median of {args.repeats})"
    )


if __name__ == "__main__":
    main()
