"""Train SMART on trajectories under a few settings, keep the one with the lowest validation loss
(held-out training questions' long trajectories; never a test question), export it as a GGUF.

    python bench/fit_grid.py --data bench/out/traj --out bench/out/grid --base embedded \
        --grid "short=2,long=2,lr=1e-4" --grid "short=3,long=4,lr=1e-4" --device auto

Each setting trains in its own folder (OUT/g0, OUT/g1, ...) from the same base; OUT/grid.json
lists each one's settings and validation losses and names the one chosen; the chosen model is
exported to OUT/model.gguf. Made for a GPU (`--device cuda`); on 2 CPU cores one setting of
`ragteam train fit` is already an hour or more.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import replace
from pathlib import Path

from ragteam.common import atomic
from ragteam.smart.training.base_model import base_gguf
from ragteam.smart.training.export import export_folder
from ragteam.smart.training.fit import FitSettings, fit

KEYS = {"short": "epochs", "long": "long_epochs", "lr": "lr", "roles": "short_roles"}


def parse_setting(text: str, base: FitSettings) -> FitSettings:
    """`short=2,long=3,lr=1e-4,roles=reconstructor+locator` over the base settings."""
    changes: dict[str, object] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, _, value = part.partition("=")
        if key not in KEYS:
            raise SystemExit(f"unknown grid key '{key}'; keys: {', '.join(KEYS)}")
        field = KEYS[key]
        changes[field] = tuple(value.split("+")) if field == "short_roles" else float(value)
    return replace(base, **changes)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--base", default="embedded")
    ap.add_argument("--grid", action="append", required=True, help="one setting; repeat")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--batch-tokens", type=int, default=2048)
    ap.add_argument("--export", default="q8_0")
    ap.add_argument("--max-steps", type=int, default=0, help="per setting (a smoke run)")
    args = ap.parse_args()
    base = FitSettings(base=args.base, batch_tokens=args.batch_tokens, max_steps=args.max_steps)
    results = []
    for i, text in enumerate(args.grid):
        settings = parse_setting(text, base)
        folder = args.out / f"g{i}"
        report = fit(args.data, folder, settings, resume=folder.exists(), device=args.device)
        results.append(
            {
                "folder": folder.name,
                "grid": text,
                "validation": report.validation,
                "steps": report.steps,
                "tokens": report.tokens,
                "seconds": round(report.seconds, 1),
                "device": report.device,
            }
        )
        print(json.dumps(results[-1]), flush=True)
    final = [r["validation"].get("long", math.inf) for r in results]
    best = results[min(range(len(results)), key=final.__getitem__)]
    summary = {"chosen": best["folder"], "by": "validation loss (long)", "runs": results}
    atomic.write_json(args.out / "grid.json", summary)
    source = base_gguf(args.base)
    if source is not None and args.export != "none":
        export_folder(
            args.out / best["folder"] / "model", source, args.out / "model.gguf", args.export
        )
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
