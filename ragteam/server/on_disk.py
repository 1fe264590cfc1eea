"""A served index as it stands on disk, before (or without) loading it: its manifest's
identity, what it is from its manifest alone, and the one message for an index never built."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragteam.errors import IndexUnusable, RagteamError
from ragteam.retrieval.index import read_manifest


def manifest_stamp(directory: Path) -> tuple[int, int] | None:
    try:
        stat = (directory / "manifest.json").stat()
    except OSError:
        return None
    return (stat.st_ino, stat.st_mtime_ns)


def raise_if_unbuilt(name: str, directory: Path) -> None:
    """A served index whose directory is not there (and no swap has it aside): said by its
    name, with what its operator does, not as a path the client cannot use."""
    aside = any(directory.parent.glob(f".{directory.name}.old-*"))  # a swap under way
    if not directory.exists() and not aside:
        raise IndexUnusable(
            f"index '{name}' is not built yet: the server's operator must build it from its "
            "folder (`ragteam index sync FOLDER --out DIR`, DIR as the server names it)"
        )


def on_disk(name: str, directory: Path) -> dict[str, Any]:
    """What an index not yet loaded is, from its manifest alone (no passages read)."""
    try:
        raise_if_unbuilt(name, directory)
        manifest = read_manifest(directory)
    except RagteamError as exc:
        return {"loaded_at": None, "usable": False, "detail": str(exc)}
    return {"built_at": manifest.built_at, "passages": manifest.passage_count, "loaded_at": None}
