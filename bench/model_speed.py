"""Benchmark 1: prompt-processing and decode speed of the embedded model on this machine.

python bench/model_speed.py [--model embedded] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

from ragteam.llm.base import TextRequest
from ragteam.llm.llamacpp import LlamaCppModel

FILLER = (
    "The Halvard Archipelago is a chain of seven islands in the cold Northern Sound, known for "
    "its lighthouses, its herring fleets and the annual Lantern Regatta. "
)


def timed(model: LlamaCppModel, prompt: str, max_tokens: int) -> tuple[float, int, int]:
    """Seconds of one greedy completion, with llama.cpp's counts of its prompt and generated
    tokens (the model made with speedups off: no prompt state kept between calls)."""
    model.forget()  # no prefix reuse between runs: measure the full prompt every time
    model.timings(reset=True)
    started = time.perf_counter()
    model.complete_text(TextRequest(prompt, max_tokens=max_tokens, temperature=0.0))
    seconds = time.perf_counter() - started
    perf = model.timings()
    # llama.cpp evaluates every generated token but the last: the count written is one more
    return seconds, int(perf["prompt_tokens"]), int(perf["generated_tokens"]) + 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=None, help="GGUF path (default: embedded)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--decode-tokens", type=int, default=128)
    args = parser.parse_args()
    model = LlamaCppModel(args.model, n_ctx=2048, speedups=False)
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
    print(f"model: {model.path.name}, threads: {model.threads}")
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
