"""An index that follows its folder. `sync_folder` reads a folder of documents into an index
and, run again, changes exactly what changed on disk:

- size and mtime as recorded: the file is not read;
- other bytes: converted again (a conversion of the same bytes is taken from the cache);
- same bytes (only the mtime moved): nothing re-read, nothing re-embedded;
- gone: its passages are deleted; the same bytes at a new path: renamed, nothing re-embedded;
- a failed file is tried again on every sync (one that ran out of its time budget only under a
  larger one).

Passages are embedded through a cache by (encoder, text), so an edited page re-embeds only
its own passages. The new index is written aside and swapped in whole: a sync killed in the
middle leaves the previous index loadable, and the next one resumes from the cache. One sync
at a time per index (a lock beside it)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragteam.common.paths import sync_cache_file
from ragteam.documents import ConvertSettings
from ragteam.documents.chunking import CHUNKING_VERSION
from ragteam.documents.isolated import DEFAULT_MEMORY_MB, DEFAULT_SECONDS
from ragteam.errors import InputError, RagteamError
from ragteam.retrieval.changes import Walk
from ragteam.retrieval.corpus import source_checksum
from ragteam.retrieval.embed_cache import cached_encode, token_counter
from ragteam.retrieval.index import (
    BuildProgress,
    IndexSettings,
    RemoteEncode,
    one_writer,
    write_aside,
)
from ragteam.retrieval.kinds import SYNC_PASSAGE_TOKENS, BuildJob
from ragteam.retrieval.scan import scan, unreadable
from ragteam.retrieval.source_passages import passages_of
from ragteam.retrieval.sources import (
    SOURCES_FILE,
    DamagedSources,
    Source,
    SyncCache,
    read_back,
    read_sources,
    write_sources,
)
from ragteam.retrieval.swap import refuse_overlap
from ragteam.settings import flag, group
from ragteam.types import Passage


@dataclass(frozen=True)
class SyncSettings:
    """How documents become passages: converter choices, and the passage budget in the
    embedding model's tokens (at most its input limit) with a short overlap."""

    passage_tokens: int = flag(
        SYNC_PASSAGE_TOKENS,
        "passage budget in the encoder's tokens (at most its input limit; 0 keeps each "
        "page/slide/section whole)",
        min=0,
        max=100_000,
    )
    overlap_tokens: int = 24
    convert: ConvertSettings = group(ConvertSettings)
    # the most a file may take to read (not recorded: a new budget re-reads nothing that was
    # read; a file that ran out of time is tried again only under a larger one)
    file_seconds: float = flag(
        DEFAULT_SECONDS,
        "the most seconds one file may take to convert (PDF, Office, HTML, Markdown, RST, "
        "text; past it the file fails alone and the sync goes on)",
        min=1,
    )
    file_memory_mb: int = flag(  # the same for the memory one file may take
        DEFAULT_MEMORY_MB,
        "the most memory (MB) one file may take to convert (past it the file fails alone "
        "and the sync goes on)",
        min=256,
    )

    # budgets, not settings of the index: a change re-reads nothing and is not recorded
    BUDGETS = ("file_seconds", "file_memory_mb")

    def to_json(self, tokenizer: str) -> dict[str, Any]:
        return {
            "passage_tokens": self.passage_tokens,
            "overlap_tokens": self.overlap_tokens,
            "convert": self.convert.key(),
            "tokenizer": tokenizer,
            "chunking": CHUNKING_VERSION,  # another cut: every file's passages cut again
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SyncSettings:
        """The settings `to_json` recorded (KeyError, TypeError or ValueError when damaged)."""
        return cls(
            int(data["passage_tokens"]),
            int(data["overlap_tokens"]),
            ConvertSettings.from_key(str(data["convert"])),
        )


@dataclass
class SyncReport:
    """What a sync did, per file and in total."""

    files: list[Source]
    changes: dict[str, list[str]]  # new, changed, renamed, deleted, touched, unchanged
    converted: int = 0
    embedded: int = 0
    tokenized: int = 0  # passages BM25 tokenized (the others' terms kept from the last sync)
    rewritten: bool = False  # the index changed: written whole, or a segment added
    segment: str = ""  # the segment the changes were written as, when not written whole
    seconds: float = 0.0
    manifest: dict[str, Any] = field(default_factory=dict)
    # said of the sync as a whole (the sync state was damaged and every file read again)
    notes: list[str] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for s in self.files if s.status == status)


def words_as_tokens(words: int) -> int:
    """A passage budget said in words, in the embedding model's tokens (4/3 a word; 0, whole
    documents, stays 0)."""
    return round(words * 4 / 3)


def build_index(
    src: str | Path,
    out: str | Path,
    *,
    passage_words: int | None = None,
    passage_tokens: int = SyncSettings.passage_tokens,
    encode: RemoteEncode | None = None,
    progress: BuildProgress | None = None,
    **index: Any,
) -> dict[str, Any]:
    """An index of `src`: a folder of documents, one document, or a JSONL corpus (a document a
    row), synced into an empty index (its manifest carries the `SyncReport` as `sync`).
    Passages hold at most `passage_tokens` of the embedding model's tokens; `passage_words`,
    when given, says it in words (4/3 tokens a word), 0 keeping every document whole. `index`
    holds `IndexSettings`' fields (retriever, bm25_stemmer, dense, mmap)."""
    tokens = passage_tokens if passage_words is None else words_as_tokens(passage_words)
    report = sync_folder(
        src,
        out,
        sync=SyncSettings(passage_tokens=tokens),
        index=IndexSettings(**index),
        encode=encode,
        progress=progress,
        fresh=True,
    )
    return {**report.manifest, "sync": report}


def sync_folder(
    src: str | Path,
    out: str | Path,
    *,
    sync: SyncSettings | None = None,
    index: IndexSettings | None = None,
    encode: RemoteEncode | None = None,
    progress: BuildProgress | None = None,
    fresh: bool = False,
    merge: bool = False,
) -> SyncReport:
    """Bring the index at `out` in step with `src`, a folder or one file (see the module's
    doc). `fresh` ignores what the index held (a build); `merge` writes the whole index
    (one segment) even where a new segment would do (`ragteam.retrieval.segments`)."""
    started = time.perf_counter()
    root = Path(src).expanduser().resolve()
    if not root.exists():
        raise InputError(f"nothing at {root}; pass the folder of documents (or one file) to index")
    out = Path(out).expanduser().resolve()
    refuse_overlap(root, out)
    settings = (sync or SyncSettings(), index or IndexSettings(), encode, progress, merge)
    with one_writer(out):
        if not fresh:
            _same_source(root, out)
        try:
            report = _sync_locked(root, out, *settings, fresh=fresh)
        except DamagedSources as exc:  # the state the next index is built from is not trusted
            if fresh:
                raise
            report = _sync_locked(root, out, *settings, fresh=True)
            report.notes.append(f"{exc.args[0].split(': `')[0]}: every file was read again")
        if report.rewritten:  # the next load (a server's start) hashes none of what it wrote
            _remember_written(out)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _same_source(root: Path, out: Path) -> None:
    """Refuse to sync `root` into an index synced from another folder or file: a mistyped
    folder would replace the index's every passage (and its embeddings) without a word. A
    damaged manifest says nothing here (the sync repairs it)."""
    from ragteam.retrieval.index import read_manifest

    if not (out / "manifest.json").is_file():
        return
    try:
        was = read_manifest(out).source.path
    except RagteamError:
        return
    if was and Path(was) != root:
        raise InputError(
            f"{out} was synced from {was}, not {root}: to index {root} there instead, rebuild "
            f"it (`ragteam index build {root} --out {out}`); else sync into another --out"
        )


def _built_as(out: Path, index: IndexSettings) -> bool:
    """Whether the (whole) index at `out` was built with `index`, as its manifest says."""
    from ragteam.retrieval.index import read_manifest, settings_of

    return settings_of(read_manifest(out)) == index


def _sync_locked(
    root: Path,
    out: Path,
    sync: SyncSettings,
    index: IndexSettings,
    encode: RemoteEncode | None,
    progress: BuildProgress | None,
    merge: bool,
    *,
    fresh: bool,
) -> SyncReport:
    started = time.perf_counter()
    count, limit, counter = token_counter(index.dense.encoder)
    budget = min(sync.passage_tokens, limit) if sync.passage_tokens > 0 else 0
    # the index's own settings are its manifest's (`settings_of`), recorded there only
    settings = {"sync": {**sync.to_json(counter), "budget": budget}}
    has_index = (out / "manifest.json").is_file()
    previous, before = ({}, {}) if fresh or not has_index else read_sources(out)
    found, left = scan(root)
    cache_file = sync_cache_file()
    cache = SyncCache(cache_file)
    try:
        reusable = before.get("sync") == settings["sync"]
        cut = (sync.convert, sync.overlap_tokens, budget, count)
        limits = (sync.file_seconds, sync.file_memory_mb)
        walk = Walk(previous, reusable, *cut, cache, *limits)
        sources = _with_left_out(walk.run(found, progress, unreadable(left)), left)
        report = SyncReport(sources, walk.changes, converted=walk.converted)
        whole = has_index and _index_whole(out)  # a damaged index is rewritten, not kept
        same = whole and reusable and _built_as(out, index)
        if same and not walk.passages_changed() and not (merge and _segmented(out)):
            if walk.recorded_changed(sources):
                write_sources(out / SOURCES_FILE, sources, settings)
            return report
        stats: dict[str, int] = {}
        _some_text(root, sources, out if has_index else None, walk.changes)
        encoding = cached_encode(cache, encode, stats, spill=cache_file.parent)
        job = BuildJob(index, encoding, progress, None, stats)
        if same and not merge and _as_segment(out, previous, sources, started, job, report):
            return report
        source = _source_info(root) | {"passage_tokens": sync.passage_tokens}
        written = _written_then_read(sources, settings)
        report.manifest = write_aside(
            out,
            written,
            source,
            index,
            job.encode,
            progress,
            previous=out if whole else None,  # a damaged index lends nothing
            stats=stats,
        )
        report.embedded, report.rewritten = stats.get("embedded", 0), True
        report.tokenized = stats.get("tokenized", 0)
        return report
    finally:
        cache.close()


def _with_left_out(sources: list[Source], left: list[Any]) -> list[Source]:
    """The walk's sources and a row for each file the scan left out, in path order: what the
    scan left out this time says why; a row of it kept from the last sync (an unlistable
    folder's own row) gives way, so no path is recorded twice."""
    said = {x.path for x in left}
    kept = [s for s in sources if s.path not in said]
    kept += [Source(x.path, 0, 0, status=x.status, reason=x.reason) for x in left]
    return sorted(kept, key=lambda s: s.path)


def _segmented(out: Path) -> bool:
    from ragteam.retrieval.index import read_manifest

    return bool(read_manifest(out).segments)


def _as_segment(
    out: Path,
    previous: dict[str, Source],
    sources: list[Source],
    started: float,
    job: BuildJob,
    report: SyncReport,
) -> bool:
    """Write the changes as a new segment of the index and say so in `report`; False when
    the index is to be written whole (`ragteam.retrieval.segment_sync`)."""
    from ragteam.retrieval.index import read_manifest
    from ragteam.retrieval.segment_sync import add_segment

    segment = add_segment(out, read_manifest(out), previous, sources, started, job)
    if segment is None:
        return False
    report.manifest, report.segment = segment, segment["segments"][-1]["folder"]
    report.rewritten = True
    report.embedded = job.stats.get("embedded", 0)
    report.tokenized = job.stats.get("tokenized", 0)
    return True


def _written_then_read(
    sources: list[Source], settings: dict[str, Any]
) -> Callable[[Path], Iterator[Passage]]:
    """The passages of a new index, given its staging folder: the sources file is written
    there first (each file's pieces read from where they are kept, one at a time), then the
    passages are read back from it: no folder's text is held at once."""

    def passages(staging: Path) -> Iterator[Passage]:
        write_sources(staging / SOURCES_FILE, sources, settings)
        for source in read_back(staging / SOURCES_FILE):
            yield from passages_of(source)

    return passages


def _source_info(root: Path) -> dict[str, Any]:
    """The manifest's record of where the passages came from: a folder, or one file with the
    checksum of its bytes (an index that no longer matches its file is said to be stale)."""
    if root.is_dir():
        return {"path": str(root), "kind": "folder"}
    return {"path": str(root), "kind": "file", "checksum": source_checksum(root)}


def _index_whole(out: Path) -> bool:
    """Whether the index at `out` is as its manifest says (seal, every file's size and
    SHA-256, memoized per file version and remembered across syncs): a sync with nothing to
    re-index still rewrites a damaged one, which `--watch` and the server's sync route then
    repair too."""
    from ragteam.retrieval.digests import verify_files
    from ragteam.retrieval.index import read_manifest

    try:
        verify_files(out, read_manifest(out), "", remember=True)
    except RagteamError:
        return False
    return True


def _remember_written(out: Path) -> None:
    from ragteam.retrieval.digests import remember_written
    from ragteam.retrieval.index import read_manifest

    remember_written(out, read_manifest(out))


def _some_text(
    root: Path, sources: list[Source], kept: Path | None, changes: dict[str, list[str]]
) -> None:
    """Refuse a sync that read no text at all (an index holds text; a read source has a
    passage at least). When an index `kept` is there, the refusal says loudly that it still
    serves its last text, the deleted files' text included, and how to stop that."""
    if any(s.status == "read" for s in sources):
        return
    reasons = "; ".join(f"{s.path}: {s.status} ({s.reason})" for s in sources[:8])
    if root.is_file():
        message = f"no text could be read from {root}" + (
            f": {sources[0].reason}" if sources else ""
        )
    else:
        message = f"no text could be read from any file in {root}" + (
            f": {reasons}" if reasons else " (the folder is empty)"
        )
    if kept is not None:
        gone = changes.get("deleted", []) + changes.get("changed", [])
        shown = ", ".join(gone[:5]) + (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
        message += (
            f". The index at {kept} is left as it was and STILL SERVES the text of the last sync"
            + (f", including {shown}" if gone else "")
            + f"; to stop serving it, delete the index folder {kept}"
        )
    raise InputError(message)


def report_dict(report: SyncReport) -> dict[str, Any]:
    """A sync's outcome as the API returns it: changes, counts, and the files not read."""
    return {
        "changes": {k: v for k, v in report.changes.items() if k != "unchanged"},
        "unchanged": len(report.changes["unchanged"]),
        "converted": report.converted,
        "embedded": report.embedded,
        "tokenized": report.tokenized,
        "rewritten": report.rewritten,
        "segment": report.segment,
        "notes": report.notes,
        "passages": report.manifest.get("passage_count"),
        "seconds": report.seconds,
        "not_read": [
            {"path": s.path, "status": s.status, "reason": s.reason}
            for s in report.files
            if s.status != "read"
        ],
    }
