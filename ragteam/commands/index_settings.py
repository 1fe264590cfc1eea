"""`index sync` on an existing folder index keeps the settings it was synced with: only a
setting flag given on the command line changes one, and every change is said before syncing
(the sync reads every file into the new settings)."""

from __future__ import annotations

from pathlib import Path

import typer

from ragteam.retrieval.index import IndexSettings
from ragteam.retrieval.sync import SyncSettings


def _source(ctx: typer.Context, name: str) -> str:
    source = ctx.get_parameter_source(name)
    return getattr(source, "name", "DEFAULT")


_SETTING_FLAGS = (
    "retriever",
    "passage_tokens",
    "html",
    "bm25_stemmer",
    "encoder",
    "embed_url",
    "index_type",
)


def kept_or_changed(
    ctx: typer.Context, out_dir: Path, sync: SyncSettings, settings: IndexSettings
) -> tuple[SyncSettings, IndexSettings]:
    """The settings an existing folder index was synced with, except those a flag gives; every
    change from the recorded ones is said first."""
    from ragteam.retrieval.sync import recorded_settings

    recorded = recorded_settings(out_dir)
    if recorded is None:
        return sync, settings
