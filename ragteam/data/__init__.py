"""Files shipped in the package (the trained models, their calibrations, the demo corpus):
their names, and where the installed package holds them."""

from __future__ import annotations

from pathlib import Path

SMART_ADAPTER = "smart-135m-lora.gguf"  # the trained SMART agent (ragteam.smart.agent)


def shipped(name: str) -> Path | None:
    """The shipped file `name`, or None when the package was installed without it."""
    path = Path(__file__).resolve().parent / name
    return path if path.is_file() else None
