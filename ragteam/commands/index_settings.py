"""The settings `index build` and `index sync` take as flags, declared once (each field is its
flag: `ragteam.commands.flags.with_settings`), and what `index sync` does with them on an
existing folder index: it keeps the settings it was synced with; only a setting flag given on
the command line changes one, and every change is said before syncing (the sync reads every
file into the new settings)."""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import typer

from ragteam.commands.common import err
from ragteam.documents import ConvertSettings
from ragteam.documents.isolated import DEFAULT_MEMORY_MB, DEFAULT_SECONDS
from ragteam.retrieval.bm25 import STEMMER
from ragteam.retrieval.dense import HNSW_FROM, INDEX_KINDS, DenseSettings
from ragteam.retrieval.encoder_registry import parse_encoder
from ragteam.retrieval.encoders import LOCAL_BACKENDS
from ragteam.retrieval.index import IndexSettings
from ragteam.retrieval.kinds import SYNC_PASSAGE_TOKENS, retriever_names
from ragteam.retrieval.sync import SyncSettings
from ragteam.settings import flag


@dataclass(frozen=True)
class IndexFlags:
    """The index settings both commands take."""

    retriever: str = flag("hybrid", "|".join(retriever_names()))
    bm25_stemmer: str = flag(STEMMER, "Snowball language, or none")
    encoder: str = flag(
        "torch",
        f"{' | '.join(LOCAL_BACKENDS)} | openai:MODEL (with --embed-url) | an installed "
        "encoder plugin's name",
    )
    embed_url: str = flag("", "OpenAI-compatible server for openai:MODEL embeddings")
    index_type: str = flag(
        "auto",
        f"FAISS index: {' | '.join(INDEX_KINDS)} (auto: flat, HNSW from {HNSW_FROM:,} passages)",
    )


@dataclass(frozen=True)
class DenseFlags:
    """How `index build` computes and stores dense vectors (a sync keeps its index's)."""

    embed_batch: int = flag(64, "texts per request", min=1, max=4096)
    shards: int = flag(1, "FAISS shards, merged", min=1, max=4096)
    mmap: bool = flag(False, "map BM25/FAISS files at load")
    nlist: int = flag(0, "IVF lists (0: 4*sqrt(n))", min=0)
    nprobe: int = flag(16, "IVF lists searched per query", min=1)
    ef_search: int = flag(64, "HNSW search breadth", min=1)


def index_settings(index: IndexFlags, dense: DenseFlags | None = None) -> IndexSettings:
    """The index's settings from its flags (a sync's dense flags are the defaults)."""
    dense = dense or DenseFlags()
    vectors = DenseSettings(
        encoder=parse_encoder(index.encoder, index.embed_url, dense.embed_batch),
        kind=index.index_type,
        shards=dense.shards,
        nlist=dense.nlist,
        nprobe=dense.nprobe,
        ef_search=dense.ef_search,
    )
    return IndexSettings(index.retriever, 100, index.bm25_stemmer, vectors, dense.mmap)


@dataclass(frozen=True)
class FolderFlags:
    """How a folder's files become passages, and what one file may take to read."""

    passage_tokens: int = flag(
        SYNC_PASSAGE_TOKENS,
        "passage budget in the encoder's tokens (at most its input limit; 0 keeps each "
        "page/slide/section whole)",
        min=0,
        max=100_000,
    )
    html: str = flag("main", "main (a page's main content) | whole (every text)")
    tables: str = flag(
        "cells", "cells (a row as `cell | cell`) | records (`Header: cell | ...` by its header)"
    )
    file_seconds: float = flag(
        DEFAULT_SECONDS,
        "the most seconds one PDF, Office or HTML file may take to read (past it the file "
        "fails alone and the sync goes on)",
        min=1,
    )
    file_memory_mb: int = flag(
        DEFAULT_MEMORY_MB,
        "the most memory (MB) one PDF, Office or HTML file may take to read (past it the "
        "file fails alone and the sync goes on)",
        min=256,
    )

    def __post_init__(self) -> None:
        try:
            ConvertSettings(self.html, self.tables)  # the converters' own check
        except ValueError as exc:
            raise ValueError(f"--html/--tables: {exc}") from exc

    def sync(self) -> SyncSettings:
        return SyncSettings(
            self.passage_tokens,
            convert=ConvertSettings(self.html, self.tables),
            file_seconds=self.file_seconds,
            file_memory_mb=self.file_memory_mb,
        )


def _source(ctx: typer.Context, name: str) -> str:
    source = ctx.get_parameter_source(name)
    return getattr(source, "name", "DEFAULT")


# the flags whose settings an index records (a file's time and memory budgets are not)
_SETTING_FLAGS = (
    *(f.name for f in dataclasses.fields(IndexFlags)),
    "passage_tokens",
    "html",
    "tables",
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
    # by name: typer may carry its own copy of click's ParameterSource
    given = {n for n in _SETTING_FLAGS if _source(ctx, n) != "DEFAULT"}
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
    return [f"{k}: {before[k]} -> {after[k]}" for k in after if before.get(k) != after[k]]
