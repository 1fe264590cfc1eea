"""Syncing a folder index again with what it was last synced with: the server's sync route
and `--watch` (`resync`), and the settings a folder index records (`recorded_settings`)."""

from __future__ import annotations

from pathlib import Path

from ragteam.errors import IndexUnusable, InputError
from ragteam.retrieval.index import BuildProgress, IndexSettings
from ragteam.retrieval.sources import SOURCES_FILE, DamagedSources, read_settings
from ragteam.retrieval.sync import SyncReport, SyncSettings, sync_folder


def recorded_settings(out: str | Path) -> tuple[SyncSettings, IndexSettings, str] | None:
    """The sync settings, index settings and source folder a folder index was last synced
    with; None when `out` holds no folder index. Damaged records are IndexUnusable."""
    from ragteam.retrieval.index import read_manifest, settings_of

    out = Path(out).expanduser().resolve()
    if not (out / "manifest.json").is_file():
        return None
    manifest = read_manifest(out)
    try:
        recorded = read_settings(out)
    except DamagedSources:  # the state is lost: the index's own settings, sync's defaults
        return SyncSettings(), settings_of(manifest), manifest.source.path
    if not recorded:  # a JSONL index built before corpora were synced like folders
        return None
    try:
        settings = SyncSettings.from_json(recorded["sync"])
        index_settings = settings_of(manifest)
    except (KeyError, TypeError, ValueError, InputError) as exc:
        raise IndexUnusable(
            f"the sync settings recorded in {out / SOURCES_FILE} are damaged ({exc}); sync "
            f"again with `ragteam index build {manifest.source.path} --out {out}`"
        ) from exc
    return settings, index_settings, manifest.source.path


def resync(out: str | Path, progress: BuildProgress | None = None) -> SyncReport:
    """Sync a folder index again from the folder and with the settings it was synced with
    (what the server's sync route and `--watch` do)."""
    found = recorded_settings(out)
    if found is None:
        raise IndexUnusable(
            f"the index at {out} was not synced from a folder; rebuild it with "
            "`ragteam index sync FOLDER --out INDEX`"
        )
    sync, index, source = found
    return sync_folder(source, out, sync=sync, index=index, progress=progress)
