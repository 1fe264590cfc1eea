"""`ragteam index build|sync|info|formats`: indexes on disk, with progress bars and a line for
every file that was not read as it was before (new, changed, renamed, deleted, skipped,
failed)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, TaskID, TextColumn, TimeElapsedColumn

from ragteam.commands.common import LoggedProgress, err, friendly_errors, out, shown
from ragteam.commands.index_settings import kept_or_changed
from ragteam.documents import ConvertSettings, converters_by_suffix
from ragteam.documents.isolated import DEFAULT_MEMORY_MB, DEFAULT_SECONDS
from ragteam.retrieval.bm25 import STEMMER
from ragteam.retrieval.dense import INDEX_KINDS, DenseSettings
from ragteam.retrieval.encoder_registry import parse_encoder
from ragteam.retrieval.encoders import LOCAL_BACKENDS
from ragteam.retrieval.index import IndexSettings, load_index, read_manifest
from ragteam.retrieval.kinds import retriever_names
from ragteam.retrieval.sync import SyncReport, SyncSettings, build_index, sync_folder

index_app = typer.Typer(no_args_is_help=True, help="Build, sync and inspect indexes.")

SrcArg = Annotated[
    Path,
    typer.Argument(
        help="a folder of documents (PDF, DOCX, PPTX, HTML, Markdown, RST, "
        "text) or a JSONL of {id, title, text}"
    ),
]
OutOpt = Annotated[Path, typer.Option("--out", help="index directory to write")]
RetrieverOpt = Annotated[str, typer.Option(help="|".join(retriever_names()))]
StemmerOpt = Annotated[str, typer.Option(help="Snowball language, or none")]
EncoderOpt = Annotated[
    str,
    typer.Option(
        help=f"{' | '.join(LOCAL_BACKENDS)} | openai:MODEL (with --embed-url) | an installed "
        "encoder plugin's name"
    ),
]
EmbedUrlOpt = Annotated[
    str, typer.Option(help="OpenAI-compatible server for openai:MODEL embeddings")
]
IndexTypeOpt = Annotated[str, typer.Option(help="FAISS index: " + " | ".join(INDEX_KINDS))]
TokensOpt = Annotated[
    int,
    typer.Option(
        min=0,
        max=100_000,
        help="passage budget in the encoder's tokens "
        "(at most its input limit; 0 keeps each page/slide/section whole)",
    ),
]
HtmlOpt = Annotated[str, typer.Option(help="main (a page's main content) | whole (every text)")]
FileSecondsOpt = Annotated[
    float,
    typer.Option(
        min=1,
        help="the most seconds one PDF, Office or HTML file may take to read (past it the file "
        "fails alone and the sync goes on)",
    ),
]
FileMemoryOpt = Annotated[
    int,
    typer.Option(
        min=256,
        help="the most memory (MB) one PDF, Office or HTML file may take to read (past it the "
        "file fails alone and the sync goes on)",
    ),
]


@dataclass(frozen=True)
class IndexFlags:
    """The flags `build` and `sync` share, turned into settings once."""

    retriever: str = "hybrid"
    bm25_stemmer: str = STEMMER
    encoder: str = "torch"
    embed_url: str = ""
    index_type: str = "flat"
    mmap: bool = False
    embed_batch: int = 64
    shards: int = 1
    nlist: int = 0
    nprobe: int = 16
    ef_search: int = 64

    def settings(self) -> IndexSettings:
        dense = DenseSettings(
            encoder=parse_encoder(self.encoder, self.embed_url, self.embed_batch),
            kind=self.index_type,
            shards=self.shards,
            nlist=self.nlist,
            nprobe=self.nprobe,
            ef_search=self.ef_search,
        )
        return IndexSettings(self.retriever, 100, self.bm25_stemmer, dense, self.mmap)


@index_app.command("build")
def index_build(
    src: SrcArg,
    out_dir: OutOpt,
    retriever: RetrieverOpt = "hybrid",
    passage_words: Annotated[
        int, typer.Option(min=0, max=100_000, help="JSONL: words per passage (0: keep whole)")
    ] = 100,
    passage_tokens: TokensOpt = 128,
    html: HtmlOpt = "main",
    file_seconds: FileSecondsOpt = DEFAULT_SECONDS,
    file_memory_mb: FileMemoryOpt = DEFAULT_MEMORY_MB,
    bm25_stemmer: StemmerOpt = STEMMER,
    encoder: EncoderOpt = "torch",
    embed_url: EmbedUrlOpt = "",
    embed_batch: Annotated[int, typer.Option(min=1, max=4096, help="texts per request")] = 64,
    index_type: IndexTypeOpt = "flat",
    shards: Annotated[int, typer.Option(min=1, max=4096, help="FAISS shards, merged")] = 1,
    mmap: Annotated[bool, typer.Option(help="map BM25/FAISS files at load")] = False,
    nlist: Annotated[int, typer.Option(min=0, help="IVF lists (0: 4*sqrt(n))")] = 0,
    nprobe: Annotated[int, typer.Option(min=1, help="IVF lists searched per query")] = 16,
    ef_search: Annotated[int, typer.Option(min=1, help="HNSW search breadth")] = 64,
    ray: Annotated[
        str | None, typer.Option(help="Ray cluster address (or auto): encode passages there")
    ] = None,
) -> None:
    """Build an index from scratch (aside, then swapped in: never left half-written)."""
    flags = IndexFlags(
        retriever,
        bm25_stemmer,
        encoder,
        embed_url,
        index_type,
        mmap,
        embed_batch,
        shards,
        nlist,
        nprobe,
        ef_search,
    )
    with friendly_errors():
        encode = None
        if ray:
            from ragteam.scale.ray_index import ray_encoder

            encode = ray_encoder(ray)
        if src.is_dir():
            sync = SyncSettings(
                passage_tokens,
                convert=ConvertSettings(_html(html)),
                file_seconds=file_seconds,
                file_memory_mb=file_memory_mb,
            )
            _sync(src, out_dir, sync, flags.settings(), fresh=True, encode=encode)
            return
        _build_jsonl(src, out_dir, flags, passage_words, encode)


def _build_jsonl(src: Path, out_dir: Path, flags: IndexFlags, words: int, encode: Any) -> None:
    settings = flags.settings()
    manifest = build_with_progress(
        src,
        out_dir,
        flags.retriever,
        words,
        flags.bm25_stemmer,
        dense=settings.dense,
        mmap=flags.mmap,
        encode=encode,
    )
    if manifest.get("replaced"):
        err.print(f"replaced the index that was in {out_dir}")
    out.print(
        f"indexed {manifest['passage_count']} passages from {manifest['document_count']} "
        f"documents into {out_dir} ({flags.retriever}, {manifest['build_seconds']:.1f} s)"
    )


@index_app.command("sync")
def index_sync(
    ctx: typer.Context,
    src: SrcArg,
    out_dir: OutOpt,
    retriever: RetrieverOpt = "hybrid",
    passage_tokens: TokensOpt = 128,
    html: HtmlOpt = "main",
    file_seconds: FileSecondsOpt = DEFAULT_SECONDS,
    file_memory_mb: FileMemoryOpt = DEFAULT_MEMORY_MB,
    bm25_stemmer: StemmerOpt = STEMMER,
    encoder: EncoderOpt = "torch",
    embed_url: EmbedUrlOpt = "",
    index_type: IndexTypeOpt = "flat",
    watch: Annotated[bool, typer.Option(help="keep syncing as files change (Ctrl-C stops)")] = (
        False
    ),
) -> None:
    """Bring an index in step with its folder: only new, changed, renamed and deleted files
    cost anything; unchanged text is never converted or embedded again. An existing index
    keeps the settings it was synced with unless a flag changes one (said before syncing)."""
    flags = IndexFlags(retriever, bm25_stemmer, encoder, embed_url, index_type)
    with friendly_errors():
        sync = SyncSettings(
            passage_tokens,
            convert=ConvertSettings(_html(html)),
            file_seconds=file_seconds,
            file_memory_mb=file_memory_mb,
        )
        sync, settings = kept_or_changed(ctx, out_dir, sync, flags.settings())
        _sync(src, out_dir, sync, settings)
        if watch:
            _watch(src, out_dir, sync, settings)


def _html(mode: str) -> str:
    from ragteam.errors import UnknownName

    if mode not in ("main", "whole"):
        raise UnknownName("--html mode", mode, ["main", "whole"])
    return mode


def _watch(src: Path, out_dir: Path, sync: SyncSettings, settings: IndexSettings) -> None:
    from watchfiles import watch

    err.print(f"watching {src} (Ctrl-C stops)")
    try:
        for _changes in watch(src, debounce=1000, step=200, recursive=True):
            try:
                _sync(src, out_dir, sync, settings)
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
        )
    print_report(report, out_dir)
    return report


_SHOWN = ("new", "changed", "renamed", "deleted")


def print_report(report: SyncReport, out_dir: Path) -> None:
    """A line per file that changed or was not read, then one summary line."""
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
    tail = (
        f"{passages} passages from {read} documents; {report.converted} converted, "
        f"{report.embedded} passages embedded"
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


@index_app.command("info")
def index_info(directory: Annotated[Path, typer.Argument(help="index directory")]) -> None:
    """Show an index's manifest, its files' status, and whether it loads."""
    from ragteam.retrieval.sources import read_sources, source_dict

    with friendly_errors():
        manifest = read_manifest(directory)
        out.print_json(json.dumps(manifest.raw))
        sources, _settings = read_sources(directory)
        if sources:
            _print_sources([source_dict(s) for s in sources.values()], Path(manifest.source.path))
        load_index(directory)
        out.print("[green]index loads and matches its manifest[/]")


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
    """The document formats an index can read, and the converter of each."""
    for suffix, converter in sorted(converters_by_suffix().items()):
        out.print(
            f"{suffix:10} {converter.name} (version {converter.version})",
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

            def report(phase: str, done: int, total: int) -> None:
                if phase not in tasks:
                    tasks[phase] = bar.add_task(phase, total=total)
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
