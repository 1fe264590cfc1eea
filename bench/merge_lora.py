"""Merge a LoRA adapter folder (`train fit --lora`'s adapter/) into its base and export the
merged model as a full GGUF: the "merged model" that the adapter's speed is compared with.

    python bench/merge_lora.py bench/out/smart-lora/adapter --out bench/out/smart-lora-merged.gguf
"""

from __future__ import annotations

import argparse
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("adapter", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--base", default="embedded")
    parser.add_argument("--type", default="q8_0", choices=("q8_0", "f16", "f32"))
    args = parser.parse_args()

    from peft import PeftModel

    from ragteam.smart.training.base_model import base_gguf, load_base
    from ragteam.smart.training.export import export_gguf

    model, _tokenizer, _bos = load_base(args.base)
    merged = PeftModel.from_pretrained(model, args.adapter).merge_and_unload()
    source = base_gguf(args.base)
    assert source is not None
    written = export_gguf(merged.state_dict(), source, args.out, args.type)
    print(f"wrote {written} ({written.stat().st_size / 1e6:.0f} MB)")


if __name__ == "__main__":
    main()
