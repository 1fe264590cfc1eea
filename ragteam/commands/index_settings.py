"""What `index sync` does with its setting flags (`IndexSettings` and `SyncSettings`, whose
fields are their flags: `ragteam.commands.flags.with_settings`) on an existing folder index:
it keeps the settings it was synced with; only a setting flag given on the command line
changes one, and every change is said before syncing (the sync reads every file into the new
settings)."""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import typer

from ragteam.commands.common import err
from ragteam.documents import ConvertSettings
from ragteam.retrieval.index import IndexSettings
from ragteam.retrieval.sync import SyncSettings

# the index settings `index sync` takes as flags (`index build` takes every one): a sync keeps
# its index's dense tuning, only its encoder and FAISS type may change
SYNC_FIELDS = ("retriever", "bm25_stemmer", "backend", "base_url", "kind")


def sync_field(f: dataclasses.Field[Any]) -> bool:
    return f.name in SYNC_FIELDS


def _source(ctx: typer.Context, name: str) -> str:
    source = ctx.get_parameter_source(name)
    return getattr(source, "name", "DEFAULT")


# the flags whose settings an index records (a file's time and memory budgets are not)
_SETTING_FLAGS = (
    "retriever",
    "bm25_stemmer",
    "encoder",
    "embed_url",
    "index_type",
    "passage_tokens",
    "html",
    "tables",
)


def kept_or_changed(
    ctx: typer.Context, out_dir: Path, sync: SyncSettings, settings: IndexSettings
) -> tuple[SyncSettings, IndexSettings]:
    """The settings an existing folder index was synced with, except those a flag gives; every
    change from the recorded ones is said first."""
    from ragteam.errors import IndexUnusable
    from ragteam.retrieval.kinds import retriever_on_disk
    from ragteam.retrieval.resync import recorded_settings

    given = {n for n in _SETTING_FLAGS if _source(ctx, n) != "DEFAULT"}
    try:
        recorded = recorded_settings(out_dir)
    except IndexUnusable as exc:  # a damaged manifest: the sync rebuilds the index
        found = retriever_on_disk(out_dir)
        if found and "retriever" not in given:
            settings = replace(settings, retriever=found)
        err.print(
            f"{out_dir}'s manifest is damaged ({str(exc).split(';')[0]}): it is rebuilt with "
            f"the settings given (retriever {settings.retriever})"
        )
        return sync, settings
    if recorded is None:
        return sync, settings
    # by name: typer may carry its own copy of click's ParameterSource (`given` above)
    old_sync, old_index = recorded[0], recorded[1]
    sync = replace(
        sync,
        passage_tokens=sync.passage_tokens
        if "passage_tokens" in given
        else old_sync.passage_tokens,
        convert=ConvertSettings(
            sync.convert.html if "html" in given else old_sync.convert.html,
            sync.convert.tables if "tables" in given else old_sync.convert.tables,
        ),
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


def setting_changes(
    old: tuple[SyncSettings, IndexSettings], new: tuple[SyncSettings, IndexSettings]
) -> list[str]:
    """What differs between two sets of settings, as `name: old -> new`."""

    def flat(settings: tuple[SyncSettings, IndexSettings]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for part in settings:
            for key, value in asdict(part).items():
                if isinstance(value, dict):
                    out |= {f"{key}.{k}": v for k, v in value.items()}
                else:
                    out[key] = value
        return out

    before, after = flat(old), flat(new)
    shaping = [k for k in after if k not in SyncSettings.BUDGETS]  # budgets change no passage
    return [f"{k}: {before[k]} -> {after[k]}" for k in shaping if before.get(k) != after[k]]
