"""`ragteam cache`: what ragteam keeps in the user's cache folder, and clearing it. Everything
there is made again on demand: merged adapters (a 145 MB GGUF per base and adapter pair),
assembled model files, exported encoders, the demo index, and the LLM call cache."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated

import typer

from ragteam.commands.common import friendly_errors, out
from ragteam.common.paths import CACHE_PARTS as PARTS
from ragteam.common.paths import cache_parts, cache_root

cache_app = typer.Typer(no_args_is_help=True, help="List or clear ragteam's cache folder.")


def size_of(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


@cache_app.command("list")
def list_command() -> None:
    """Each part of the cache with its size."""
    out.print(f"cache folder: {cache_root()}")
    for part, entries in cache_parts().items():
        total = sum(size_of(p) for p in entries)
        out.print(f"{part:9s} {len(entries):3d} entries  {total / 1e6:9.1f} MB")


@cache_app.command("clear")
def clear_command(
    parts: Annotated[list[str], typer.Argument(help=f"parts to clear: {', '.join(PARTS)}")],
) -> None:
    """Delete parts of the cache (they are made again when needed). Do not clear `llm` or
    `merged` while another ragteam process is using them."""
    from ragteam.errors import UnknownName

    with friendly_errors():
        for part in parts:
            if part not in PARTS:
                raise UnknownName("cache part", part, list(PARTS))
        entries = cache_parts()
        for part in parts:
            freed = 0
            for entry in entries[part]:
                freed += size_of(entry)
                if entry.is_dir():
                    shutil.rmtree(entry)
                else:
                    entry.unlink(missing_ok=True)
            out.print(f"cleared {part}: {freed / 1e6:.1f} MB")
