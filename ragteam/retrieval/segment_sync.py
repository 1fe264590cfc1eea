"""A sync that writes the files it read again as a new segment of the index
(`ragteam.retrieval.segments`), instead of writing the whole index: the changed files' passages,
BM25 and FAISS files (vectors through the cache), the tombstones of their earlier passages, then
the manifest swapped in, then the sync state's changed rows. A kill before the manifest is
swapped leaves the earlier segments (the unlisted folder is removed next time); a kill after it
and before the state is written leaves the state as it was, so the next sync reads those files
again and writes them once more (their passages in the segment before are dropped).

A sync that would pass `MAX_SEGMENTS` folds the newest segments of like size instead
(`_fold_from`): their live passages, with the sync's files, are written as one segment that
drops what they dropped. What a fold rewrites is the changes since the last
whole write (at most `MERGE_SHARE` of the index, or the index is written whole), not the index:
an edit to a big folder that people keep editing never waits for the whole index again until the
changes since its last whole write pass that share."""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragteam.retrieval.bm25_build import TF_FILE
from ragteam.retrieval.digests import file_digests
from ragteam.retrieval.kinds import BuildJob, kind
from ragteam.retrieval.manifest import SEAL, Manifest, seal
from ragteam.retrieval.passage_file import PassageFile, SourceRun, Written, write_passages
from ragteam.retrieval.segments import (
    FOLDER,
    MAX_SEGMENTS,
    MERGE_SHARE,
    RUNS_FILE,
    Segment,
    all_runs,
    combined_checksum,
    live_documents,
    live_masks,
    next_folder,
    remove_unlisted,
    write_manifest,
    write_runs,
)
from ragteam.retrieval.source_passages import passages_of
from ragteam.retrieval.sources import SOURCES_FILE, Source, update_sources
from ragteam.types import Passage

TIER = 2.0  # an older segment is folded with the newer ones up to this many times their size


@dataclass(frozen=True)
class Plan:
    """What a segment changes: the files whose passages it writes, the paths whose earlier
    passages it drops, and the sync state's rows to write and to delete."""

    rewritten: list[Source]
    dropped: list[str]
    recorded: list[Source]
    deleted: list[str]


def plan(previous: dict[str, Source], sources: list[Source]) -> Plan:
    current = {s.path for s in sources}
    deleted = sorted(p for p in previous if p not in current)
    rewritten = [s for s in sources if _passages_of(previous.get(s.path)) != _passages_of(s)]
    recorded = [s for s in sources if _recorded(previous.get(s.path)) != _recorded(s)]
    dropped = sorted(set(deleted) | {s.path for s in rewritten if s.path in previous})
    return Plan(rewritten, dropped, recorded, deleted)


def _passages_of(source: Source | None) -> tuple[Any, ...] | None:
    """What a file's passages follow from (the same bytes read by the same converter)."""
    if source is None:
        return None
    return (source.sha256, source.converter, source.status, source.title)


def _recorded(source: Source | None) -> tuple[Any, ...] | None:
    if source is None:
        return None
    return (*_passages_of(source), source.size, source.mtime_ns, source.reason, source.notes)


def segmentable(out: Path, manifest: Manifest) -> bool:
    """Whether the index at `out` can take a segment: built-in kinds only (BM25, dense or
    both), every segment with its runs (and BM25's term counts): an
    index written before segments has neither, and its next write is whole."""
    if not set(manifest.searchers) <= {"bm25", "dense"}:
        return False
    listed = list(manifest.segments) or [Segment("", manifest.passage_count)]
    bm25_too = "bm25" in manifest.searchers
    return all(
        (out / s.folder / RUNS_FILE).is_file()
        and (not bm25_too or not s.passages or (out / s.folder / "bm25" / TF_FILE).is_file())
        for s in listed
    )


def add_segment(
    out: Path,
    manifest: Manifest,
    previous: dict[str, Source],
    sources: list[Source],
    started: float,
    job: BuildJob,
) -> dict[str, Any] | None:
    """Write the sync as a new segment of the index at `out` (folding the newest segments
    into it when they would pass `MAX_SEGMENTS`) and return its manifest; None when a whole
    write is due instead (the new and dead passages too large a share, or a passage id taken
    twice). `job`: the index's settings, and the encoder through the cache (vectors of
    unchanged texts are not made again)."""
    if not segmentable(out, manifest):
        return None
    change = plan(previous, sources)
    segments = list(manifest.segments) or [
        Segment("", manifest.passage_count, (), manifest.corpus_checksum)
    ]
    fresh = [p for s in change.rewritten if s.status == "read" for p in passages_of(s)]
    runs = all_runs(out, segments)
    masks = live_masks(segments, runs)
    start = _fold_from(segments, len(fresh))
    kept = _still_live(out, segments[start:], runs[start:], masks[start:], set(change.dropped))
    stays = segments[:start]
    live = _live_after(manifest, runs, masks, fresh, set(change.dropped), len(kept), stays)
    if live is None or _taken(out, fresh, set(change.dropped)):
        return None
    from ragteam.retrieval.index import remove_dead_staging

    remove_dead_staging(out)  # whole writes killed before (their staging folders)
    remove_unlisted(out, segments)
    folder = next_folder(out, segments)  # past every folder listed, the folded ones too
    written, params = _write(out, folder, kept + fresh, manifest, job)
    gone = segments[len(stays) :]
    dropped = tuple(sorted({p for s in gone for p in s.dropped} | set(change.dropped)))
    listed = [*stays, Segment(folder, written.count, dropped, written.checksum, params)]
    raw = {k: v for k, v in manifest.raw.items() if k != SEAL}
    files = {k: v for k, v in raw["files"].items() if not any(_in(k, s) for s in gone)}
    files |= {f"{folder}/{name}": record for name, record in file_digests(out / folder).items()}
    raw |= {
        "segments": [s.to_dict() for s in listed],
        "files": files,
        "passage_count": live,
        "document_count": live_documents(listed, runs[:start] + [written.runs]),
        "corpus_checksum": combined_checksum(listed),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "build_seconds": round(time.perf_counter() - started, 3),
    }
    sealed = seal(raw)
    write_manifest(out, sealed)  # the folded folders stay until the next sync's tidying
    update_sources(out / SOURCES_FILE, change.recorded, change.deleted)
    return sealed


def _in(name: str, segment: Segment) -> bool:
    return bool(segment.folder) and name.startswith(segment.folder + "/")


def _fold_from(segments: list[Segment], new: int) -> int:
    """Where the segments a sync folds into its own begin (`len(segments)`: none). Under
    MAX_SEGMENTS none; else the newest, and each older one no larger than TIER times the
    newer ones and the sync's `new` passages together: segments of like size are folded, as
    in Lucene's tiered merges, so a passage is written again a few times, not at every fold.
    Never the index's own files (the first)."""
    if len(segments) < MAX_SEGMENTS:
        return len(segments)
    at, size = len(segments) - 1, new + segments[-1].passages
    while at > 1 and segments[at - 1].passages <= TIER * size:
        at -= 1
        size += segments[at].passages
    return at


def _still_live(
    out: Path,
    folded: list[Segment],
    runs: list[list[SourceRun]],
    masks: list[np.ndarray],
    dropped: set[str],
) -> list[Passage]:
    """The live passages of the `folded` segments (with their runs and live masks) that this
    sync does not drop, in segment order: what a fold writes again beside the sync's files."""
    kept = []
    for segment, part, mask in zip(folded, runs, masks, strict=True):
        stored = PassageFile.scanned(out / segment.folder / "passages.jsonl")
        for run in part:
            if run.source not in dropped:
                live = np.flatnonzero(mask[run.first : run.first + run.count]) + run.first
                kept += [stored[int(n)] for n in live]
    return kept


def _live_after(
    manifest: Manifest,
    runs: list[list[SourceRun]],
    masks: list[np.ndarray],
    fresh: list[Passage],
    dropped: set[str],
    kept: int,
    stays: list[Segment],
) -> int | None:
    """The live passages once `fresh` are added (with `kept` passages of folded segments) and
    the files `dropped` end; None when the new and all dead passages of the segments that
    stay would pass MERGE_SHARE of them (the index is then written whole)."""
    dying = sum(
        r.count
        for part, mask in zip(runs, masks, strict=True)
        for r in part
        if r.source in dropped and mask[r.first : r.first + r.count].any()
    )
    live = manifest.passage_count - dying + len(fresh)
    dead = sum(s.passages for s in stays) + kept + len(fresh) - live
    return None if dead + len(fresh) > MERGE_SHARE * max(live, 1) else live


def _taken(out: Path, fresh: list[Passage], dropped: set[str]) -> bool:
    """Whether a row of a collection (a JSONL corpus) would take an id that a passage of
    another file still holds (a file's own passages are named after its path: never taken;
    a dropped file's ids are free). The whole write then says which."""
    records = [p for p in fresh if p.doc_id != (p.locator.source if p.locator else None)]
    if not records:
        return False
    from ragteam.retrieval.index import load_index

    index = load_index(out, check_source=False)
    for p in records:
        held = index.passage(p.id)
        if held is not None and (held.locator.source if held.locator else "") not in dropped:
            return True
    return False


def _write(
    out: Path, folder: str, fresh: list[Passage], manifest: Manifest, job: BuildJob
) -> tuple[Written, dict[str, dict[str, Any]]]:
    """The segment's files, written beside their folder and renamed into it; and what each
    kind recorded of its build."""
    final = out / folder
    staging = out / FOLDER / f".{final.name}.{os.getpid()}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    shutil.rmtree(final, ignore_errors=True)
    staging.mkdir(parents=True)
    params: dict[str, dict[str, Any]] = {}
    try:
        path = staging / "passages.jsonl"
        written = write_passages(path, iter(fresh))
        write_runs(staging, written.runs)
        stored = PassageFile(path, written.starts)
        for name in manifest.searchers if written.count else ():
            params[name] = kind(name).build(stored, staging, job).params
        os.replace(staging, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return written, params
