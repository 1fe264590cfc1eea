"""What the span reader's network costs an answer, and what cheaper ways of running it change
(issue 89 item 4; docs/benchmarks.md §72).

    python bench/reader_precision.py --data ../shared/data/docqa-train --work /tmp/dqt/people

Answers `read` gives to the first 10 validation questions of four docqa-train parts (indexes
as bench/docqa_train.py syncs them) are recorded, every network call's batch kept; then the
same batches are run again through the encoder each way below (twice: the second pass is
timed, once the kernels for each shape are made), and the CPU seconds and the largest change of
a real token's hidden value against float32 are printed."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import torch
from docqa_dev import index_of
from docqa_train import chosen

from ragteam import answer
from ragteam.reader.model import SpanNet

PARTS = ("gnu", "python", "sysadmin", "latex")


def recorded(data: Path, work: Path) -> tuple[list[dict[str, Any]], float]:
    """The batches of the reader's network calls, and the answers' CPU seconds."""
    batches: list[dict[str, Any]] = []
    plain = SpanNet.logits

    def logits(self: SpanNet, windows: Any) -> Any:
        batches.append({k: v.clone() for k, v in windows.inputs.items()})
        return plain(self, windows)

    SpanNet.logits = logits  # type: ignore[method-assign]
    started = time.process_time()
    for part in PARTS:
        index = index_of(data / part, work / part)
        rows = [json.loads(x) for x in (data / part / "questions.jsonl").read_text().splitlines()]
        for q in chosen(rows, "validation", part)[:10]:
            answer(q["question"], index=index, strategy="read")
    SpanNet.logits = plain  # type: ignore[method-assign]
    return batches, time.process_time() - started


def by_length(encoder: Any, batch: dict[str, Any], slack: float = 1.15) -> Any:
    """The windows run in groups of similar length, each cut to its longest (a group grows
    while its padded size stays within `slack` of its real tokens)."""
    lengths = batch["attention_mask"].sum(-1).tolist()
    order = sorted(range(len(lengths)), key=lambda n: -lengths[n])
    out = torch.zeros(*batch["input_ids"].shape, encoder.config.hidden_size)
    i = 0
    while i < len(order):
        j, longest, real = i + 1, lengths[order[i]], lengths[order[i]]
        while j < len(order) and (j + 1 - i) * longest <= slack * (real + lengths[order[j]]):
            real += lengths[order[j]]
            j += 1
        rows = order[i:j]
        part = {k: v[rows, :longest] for k, v in batch.items()}
        out[rows, :longest] = encoder(**part).last_hidden_state.float()
        i = j
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="the docqa-train folder")
    parser.add_argument("--work", type=Path, default=Path("/tmp/dqt/people"))
    args = parser.parse_args()
    batches, spent = recorded(args.data, args.work)
    real = sum(int(b["attention_mask"].sum()) for b in batches)
    padded = sum(b["attention_mask"].numel() for b in batches)
    share = real / padded
    print(f"{len(batches)} calls of 40 answers ({spent:.1f} CPU-s in all), real tokens {share:.2f}")
    from ragteam.minilm.cross_encoder import installed_minilm

    encoder = installed_minilm()[1]
    ways = {
        "float32": (lambda b: encoder(**b).last_hidden_state, False),
        "by length": (lambda b: by_length(encoder, b), False),
        "bfloat16": (lambda b: encoder(**b).last_hidden_state, True),
        "bfloat16 by length": (lambda b: by_length(encoder, b), True),
    }
    base: list[Any] = []
    for threads in (2, 1):
        torch.set_num_threads(threads)
        for name, (run, bf16) in ways.items():
            with torch.inference_mode(), torch.autocast("cpu", torch.bfloat16, enabled=bf16):
                for _ in range(2):  # the second pass is timed: kernels made for each shape
                    started = time.process_time()
                    outs = [run(b).float() for b in batches]
                    seconds = time.process_time() - started
            base = base or outs
            worst = max(
                float(((o - r).abs() * b["attention_mask"][..., None]).max())
                for o, r, b in zip(outs, base, batches, strict=True)
            )
            print(f"{threads} threads, {name}: {seconds:.2f} CPU-s, largest change {worst:.1e}")


if __name__ == "__main__":
    main()
