"""`index sync` on an existing folder index keeps the settings it was synced with: only a
setting flag given on the command line changes one, and every change is said before syncing
(the sync reads every file into the new settings)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import typer

from ragteam.commands.common import err
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
    from ragteam.retrieval.sync import recorded_settings, setting_changes

    recorded = recorded_settings(out_dir)
    if recorded is None:
        return sync, settings
    # by name: typer may carry its own copy of click's ParameterSource
    given = {n for n in _SETTING_FLAGS if _source(ctx, n) != "DEFAULT"}
    old_sync, old_index = recorded[0], recorded[1]
    sync = replace(
        sync,
        passage_tokens=sync.passage_tokens
        if "passage_tokens" in given
        else old_sync.passage_tokens,
        convert=sync.convert if "html" in given else old_sync.convert,
    )
    settings = replace(
        settings,
        retriever=settings.retriever if "retriever" in given else old_index.retriever,
        bm25_stemmer=settings.bm25_stemmer if "bm25_stemmer" in given else old_index.bm25_stemmer,
        dense=settings.dense if given & {"encoder", "embed_url", "index_type"} else old_index.dense,
        mmap=old_index.mmap,
    )
    changes = setting_changes((old_sync, old_index), (sync, settings))
    if changes:
        err.print(
            f"changing the settings of {out_dir} ({'; '.join(changes)}): every file is read "
            "into the new settings"
        )
    return sync, settings
