"""How long a model takes to be ready: load (and, for a LoRA adapter, the merge into its base,
made once into the cache folder) plus one short raw-text continuation. Run once with an empty
cache folder ("cold": the merge happens) and once more with the same folder ("warm").

    python bench/load_time.py --lora bench/out/cmp-lora/adapter.gguf
    python bench/load_time.py --model bench/out/cmp-full/model.gguf
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ragteam.llm import TextRequest


def ready_seconds(model: str, lora: str | None, threads: int) -> float:
    from ragteam.llm import ModelOptions, load_model

    start = time.perf_counter()
    options = ModelOptions(lora=Path(lora) if lora else None, cache=False, n_threads=threads)
    llm = load_model(model, options)
    llm.complete_text(
        TextRequest("<|Instruction|>:\nWho wrote Hamlet?</eoi>\n\n", max_tokens=1, temperature=0.0)
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--lora", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:  # one fresh process: nothing loaded before
        print(f"{ready_seconds(args.model, args.lora, args.threads):.2f}")
        return
    size = (
        Path(args.lora or args.model).stat().st_size
        if args.lora or args.model.endswith(".gguf")
        else 0
    )
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "XDG_CACHE_HOME": cache}
        command = [sys.executable, __file__, "--child", "--model", args.model]
        command += ["--lora", args.lora] if args.lora else []
        command += ["--threads", str(args.threads)]
        times = [
            float(
                subprocess.run(
                    command, env=env, check=True, capture_output=True, text=True
                ).stdout.split()[-1]
            )
            for _ in ("cold", "warm")
        ]
    print(f"file {size / 1e6:.1f} MB; ready: cold {times[0]:.2f} s, warm {times[1]:.2f} s")


if __name__ == "__main__":
    main()
