"""`ragteam index build|sync|info|formats`: indexes on disk, with progress bars and a line for
every file that was not read as it was before (new, changed, renamed, deleted, skipped,
failed)."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, TaskID, TextColumn, TimeElapsedColumn

from ragteam.commands.common import LoggedProgress, err, friendly_errors, out, shown
from ragteam.commands.flags import with_settings
from ragteam.commands.index_settings import (
    kept_or_changed,
    sync_field,
)
from ragteam.documents import converters_by_suffix
from ragteam.retrieval.bm25 import STEMMER
from ragteam.retrieval.index import IndexSettings, load_index, read_manifest
from ragteam.retrieval.sync import (
    SyncReport,
    SyncSettings,
    build_index,
    sync_folder,
    words_as_tokens,
)

index_app = typer.Typer(no_args_is_help=True, help="Build, sync and inspect indexes.")

SrcArg = Annotated[
    Path,
    typer.Argument(
        help="a folder of documents (PDF, DOCX, PPTX, HTML, Markdown, RST, "
        "text) or a JSONL of {id, title, text}"
    ),
]
OutOpt = Annotated[Path, typer.Option("--out", help="index directory to write")]
RayOpt = Annotated[
    str | None,
    typer.Option(
        help="a Ray cluster's address (or auto: the one this machine belongs to): the passages "
        "are embedded there, one encoder per CPU; the index is written here"
    ),
]


def _ray_encode(address: str | None) -> Any:
    if not address:
        return None
    from ragteam.scale.ray_index import ray_encoder

    return ray_encoder(address)


@index_app.command("build")
@with_settings("sync", SyncSettings)
@with_settings("settings", IndexSettings)
def index_build(
    src: SrcArg,
    out_dir: OutOpt,
    settings: IndexSettings,
    sync: SyncSettings,
    passage_words: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=100_000,
            help="the passage budget in words (4/3 tokens a word) instead of --passage-tokens; "
            "0 keeps every document (a JSONL row, a page, a slide, a section) whole",
        ),
    ] = None,
    ray: RayOpt = None,
) -> None:
    """Build an index from scratch (aside, then swapped in: never left half-written)."""
    with friendly_errors():
        encode = _ray_encode(ray)
        if passage_words is not None:
            sync = replace(sync, passage_tokens=words_as_tokens(passage_words))
        _sync(src, out_dir, sync, settings, fresh=True, encode=encode)


@index_app.command("sync")
@with_settings("sync", SyncSettings)
@with_settings("settings", IndexSettings, only=sync_field)
def index_sync(
    ctx: typer.Context,
    src: SrcArg,
    out_dir: OutOpt,
    settings: IndexSettings,
    sync: SyncSettings,
    watch: Annotated[bool, typer.Option(help="keep syncing as files change (Ctrl-C stops)")] = (
        False
    ),
    merge: Annotated[
        bool, typer.Option(help="write the whole index as one segment (a BM25 index's segments)")
    ] = False,
    ray: RayOpt = None,
) -> None:
    """Bring an index in step with its folder: only new, changed, renamed and deleted files
    cost anything; unchanged text is never converted or embedded again. A BM25 index takes
    a few changed files as a new segment; `--merge` folds its segments into one. An existing
    index keeps the settings it was synced with unless a flag changes one (said before)."""
    with friendly_errors():
        sync, settings = kept_or_changed(ctx, out_dir, sync, settings)
        encode = _ray_encode(ray)
        _sync(src, out_dir, sync, settings, encode=encode, merge=merge)
        if watch:
            _watch(src, out_dir, sync, settings, encode)


def _watch(
    src: Path, out_dir: Path, sync: SyncSettings, settings: IndexSettings, encode: Any
) -> None:
    from watchfiles import watch

    err.print(f"watching {src} (Ctrl-C stops)")
    try:
        for _changes in watch(src, debounce=1000, step=200, recursive=True):
            try:
                _sync(src, out_dir, sync, settings, encode=encode)
            except Exception as exc:  # one failed sync does not stop the watch  # noqa: BLE001
                err.print(f"[red]sync failed:[/] {escape(str(exc))}")
    except KeyboardInterrupt:
        err.print("stopped watching")


def _sync(
    src: Path,
    out_dir: Path,
    sync: SyncSettings,
    settings: IndexSettings,
    *,
    fresh: bool = False,
    encode: Any = None,
    merge: bool = False,
) -> SyncReport:
    with _progress("index sync") as report_progress:
        report = sync_folder(
            src,
            out_dir,
            sync=sync,
            index=settings,
            encode=encode,
            progress=report_progress,
            fresh=fresh,
            merge=merge,
        )
    if fresh and report.manifest.get("replaced"):
        err.print(f"replaced the index that was in {out_dir}")
    print_report(report, out_dir)
    return report


_SHOWN = ("new", "changed", "renamed", "deleted")


def print_report(report: SyncReport, out_dir: Path) -> None:
    """A line per file that changed or was not read, then one summary line."""
    for note in report.notes:
        out.print(f"[yellow]note[/]     {shown(note)}", highlight=False, soft_wrap=True)
    for kind in _SHOWN:
        for path in report.changes[kind]:
            out.print(f"{kind:8} {shown(path)}", highlight=False, soft_wrap=True)
    fresh = set(report.changes["new"] + report.changes["changed"])
    for source in report.files:
        if source.status in ("skipped", "failed"):
            style = "yellow" if source.status == "skipped" else "red"
            out.print(
                f"[{style}]{source.status:8}[/] {shown(source.path)}: {shown(source.reason)}",
                highlight=False,
                soft_wrap=True,
            )
        for note in source.notes if source.path in fresh else []:
            out.print(
                f"[yellow]note[/]     {shown(source.path)}: {shown(note)}",
                highlight=False,
                soft_wrap=True,
            )
    counts = ", ".join(f"{len(report.changes[k])} {k}" for k in (*_SHOWN, "touched", "unchanged"))
    read = report.count("read")
    passages = report.manifest.get("passage_count")
    documents = report.manifest.get("document_count", read)
    tail = (
        f"{passages} passages from {documents} documents in {read} files; "
        f"{report.converted} converted, "
        f"{report.embedded} passages embedded"
        + (
            f", {report.tokenized} tokenized for BM25"
            if "bm25" in report.manifest.get("searchers", ())
            else ""
        )
        + _segment_note(report)
        if report.rewritten
        else "nothing to re-index"
    )
    skipped, failed = report.count("skipped"), report.count("failed")
    out.print(
        f"synced {escape(str(out_dir))}: {counts}; {tail}; {skipped} skipped, {failed} failed "
        f"({report.seconds:.2f} s)",
        highlight=False,
        soft_wrap=True,
    )


def _segment_note(report: SyncReport) -> str:
    if not report.segment:
        return ""
    segments = len(report.manifest.get("segments", []))
    return f"; written as {report.segment} ({segments} segments; `--merge` folds them into one)"


@index_app.command("info")
def index_info(directory: Annotated[Path, typer.Argument(help="index directory")]) -> None:
    """Show an index's manifest, its files' status, and whether it loads."""
    from ragteam.retrieval.builtin_kinds import bm25_mapped
    from ragteam.retrieval.index import recover_swap
    from ragteam.retrieval.sources import read_sources, source_dict

    with friendly_errors():
        recover_swap(directory)  # a sync killed mid-swap left the index beside its name
        manifest = read_manifest(directory)
        out.print_json(json.dumps(manifest.raw))
        dense = manifest.raw.get("params", {}).get("dense") or {}
        if isinstance(dense.get("built"), dict):  # which FAISS type, and why
            out.print(f"dense index: {dense['built'].get('kind')} ({dense['built'].get('why')})")
        if "bm25" in manifest.searchers and not manifest.segments:  # in memory or mapped, why
            mapped, why = bm25_mapped(manifest, manifest.passage_count)
            how = "mapped from disk" if mapped else "read into memory"
            out.print(f"bm25 matrix: {how} ({why})")
        for line in segment_lines(directory, manifest):
            out.print(line, highlight=False)
        sources, _settings = read_sources(directory)
        if sources:
            _print_sources([source_dict(s) for s in sources.values()], Path(manifest.source.path))
        load_index(directory)
        out.print("[green]index loads and matches its manifest[/]")


def segment_lines(directory: Path, manifest: Any) -> list[str]:
    """A line per segment: its folder, passages (live of written) and the files it dropped."""
    from ragteam.retrieval.segments import all_runs, live_masks

    if not manifest.segments:
        return []
    masks = live_masks(manifest.segments, all_runs(directory, manifest.segments))
    return [
        f"segment {segment.folder or '(whole)'}: {int(mask.sum())} of {segment.passages} "
        f"passages live; dropped {len(segment.dropped)} files"
        for segment, mask in zip(manifest.segments, masks, strict=True)
    ]


def _print_sources(sources: list[dict[str, Any]], root: Path) -> None:
    from ragteam.retrieval.scan import scan

    by_status: dict[str, int] = {}
    for s in sources:
        by_status[s["status"]] = by_status.get(s["status"], 0) + 1
        if s["status"] == "read":
            where = f"{s['pages']} pages, " if s["pages"] else ""
            where += f"{s['slides']} slides, " if s["slides"] else ""
            said = f"{where}{s['passages']} passages" + (
                f"; {s['warning']}" if s["warning"] else ""
            )
        else:
            said = shown(s["reason"])
        out.print(f"{s['status']:8} {shown(s['path'])}: {said}", highlight=False, soft_wrap=True)
    out.print(
        "files: " + ", ".join(f"{n} {k}" for k, n in sorted(by_status.items())), soft_wrap=True
    )
    if root.is_dir() and str(root) != ".":
        found, _left = scan(root)
        known = {s["path"]: (s["size"], s["mtime_ns"]) for s in sources}
        on_disk = {f.path for f in found}
        drift = [f.path for f in found if known.get(f.path) != (f.size, f.mtime_ns)]
        drift += [p for p, (size, _m) in known.items() if size and p not in on_disk]
        if drift:
            out.print(
                f"[yellow]{len(drift)} files changed since the last sync[/] "
                f"(e.g. {escape(drift[0])}): `ragteam index sync {root} --out ...`",
                soft_wrap=True,
            )


@index_app.command("formats")
def index_formats() -> None:
    """The document formats an index can read, and the converter of each; a file of any
    other suffix (or none) is read as plain text when its bytes are text."""
    for suffix, converter in sorted(converters_by_suffix().items()):
        out.print(
            f"{suffix:10} {converter.name} (version {converter.version})",
            highlight=False,
            soft_wrap=True,
        )
    out.print(
        "other      text, when the file's bytes are text (squid.conf, README, tar.1); "
        "otherwise skipped",
        highlight=False,
        soft_wrap=True,
    )


def _progress(label: str) -> Any:
    import contextlib

    @contextlib.contextmanager
    def bar_progress():  # noqa: ANN202
        with LoggedProgress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(),
            label=label,
        ) as bar:
            tasks: dict[str, TaskID] = {}
            shown: dict[str, float] = {}

            def report(phase: str, done: int, total: int) -> None:
                if phase not in tasks:
                    tasks[phase] = bar.add_task(phase, total=total)
                now = time.monotonic()  # a tick per file is 0.5 s at 28,000 files: 20 a second
                if done < total and now - shown.get(phase, 0.0) < 0.05:
                    return
                shown[phase] = now
                bar.update(tasks[phase], completed=done, total=total)

            yield report

    return bar_progress()


def build_with_progress(
    src: Path,
    directory: Path,
    retriever: str,
    words: int,
    stemmer: str = STEMMER,
    **options: Any,
) -> dict[str, Any]:
    with _progress("index build") as report:
        return build_index(
            src,
            directory,
            retriever=retriever,
            passage_words=words,
            bm25_stemmer=stemmer,
            progress=report,
            **options,
        )
