"""Index segments: a sync that changes a few files of a big index writes them as a new small
segment instead of rewriting the index.

A segment is a folder `segments/NNNN` of the index holding the passages of the files the sync
read again (`passages.jsonl`, its runs, its BM25 and FAISS files). The manifest lists the
segments in order, the whole index written by the last full write first (folder ""), and each
later one with the source paths it `dropped`: the files it replaces or that were deleted, whose
passages in the earlier segments are dead from then on (tombstones). Segments are never changed
once written; the manifest that lists them is replaced atomically, so a sync killed at any point
leaves the last set loadable (a folder it wrote and never listed is removed by the next sync).

Search sees the live passages only, numbered in segment order (`SegmentedPassages`); BM25 scores
them with statistics over every live passage (`ragteam.retrieval.bm25_segments`): the scores are
those of one index written fresh from the same files; dense search merges each segment's FAISS
hits (`ragteam.retrieval.dense_segments`). When the segments grow many (`MAX_SEGMENTS`), the
sync folds the newest into its own segment (`ragteam.retrieval.segment_sync`); when their new
and dead passages grow a large share of the index (`MERGE_SHARE`), or `index sync --merge` asks,
the sync writes the whole index again (one segment)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import numpy as np

from ragteam.common import atomic
from ragteam.errors import IndexUnusable
from ragteam.retrieval.passage_file import PassageFile, SourceRun
from ragteam.types import Passage

RUNS_FILE = "passages.runs.json"
FOLDER = "segments"
MAX_SEGMENTS = 8  # segments an index holds at most: the sync that would add a ninth folds
MERGE_SHARE = 0.25  # new and dead passages past this share of the live ones: merged


@dataclass(frozen=True)
class Segment:
    """A segment as the manifest lists it."""

    folder: str  # relative to the index ("" for the whole index's own files)
    passages: int
    dropped: tuple[str, ...] = ()  # source paths whose earlier passages this one ends
    checksum: str = ""
    # what each kind recorded building this segment (the FAISS type of its size), where it
    # differs from the manifest's `params` (those of the whole index's own files)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "folder": self.folder,
            "passages": self.passages,
            "dropped": list(self.dropped),
            "checksum": self.checksum,
            "params": self.params,
        }

    @classmethod
    def from_dict(cls, data: object) -> Segment:
        """A segment as `to_dict` wrote it (ValueError when it is not)."""
        if not isinstance(data, dict):
            raise ValueError("a segment is an object")
        folder, passages, dropped = data.get("folder"), data.get("passages"), data.get("dropped")
        if not isinstance(folder, str) or not isinstance(passages, int) or passages < 0:
            raise ValueError("a segment needs its folder and passage count")
        if folder and (folder.startswith("/") or ".." in Path(folder).parts):
            raise ValueError(f"segment folder {folder!r} is not inside the index")
        if not isinstance(dropped, list) or not all(isinstance(p, str) for p in dropped):
            raise ValueError("a segment's dropped paths are a list of strings")
        params = data.get("params", {})
        if not isinstance(params, dict) or not all(isinstance(v, dict) for v in params.values()):
            raise ValueError("a segment's params are an object of objects")
        return cls(folder, passages, tuple(dropped), str(data.get("checksum", "")), params)


def write_runs(directory: Path, runs: list[SourceRun]) -> None:
    (directory / RUNS_FILE).write_text(json.dumps([r.to_list() for r in runs]), "utf-8")


def read_runs(directory: Path) -> list[SourceRun]:
    """The runs a segment's passages were written in (IndexUnusable when damaged)."""
    try:
        data = json.loads((directory / RUNS_FILE).read_text("utf-8"))
        return [SourceRun.from_list(row) for row in data]
    except (OSError, ValueError, TypeError) as exc:
        raise IndexUnusable(f"{directory / RUNS_FILE} cannot be read ({exc})") from exc


def all_runs(directory: Path, segments: Sequence[Segment]) -> list[list[SourceRun]]:
    """Each segment's runs, read once for the functions below."""
    return [read_runs(directory / segment.folder) for segment in segments]


def _dead_after(segments: Sequence[Segment]) -> list[set[str]]:
    """For each segment, the files a later segment dropped (its passages of them are dead)."""
    return [
        {p for later in segments[at + 1 :] for p in later.dropped} for at in range(len(segments))
    ]


def live_masks(segments: Sequence[Segment], runs: list[list[SourceRun]]) -> list[np.ndarray]:
    """Each segment's live passages: a passage is dead when a later segment dropped its file."""
    masks = []
    for segment, dead, part in zip(segments, _dead_after(segments), runs, strict=True):
        mask = np.ones(segment.passages, dtype=bool)
        for run in part if dead else ():
            if run.source in dead:
                mask[run.first : run.first + run.count] = False
        masks.append(mask)
    return masks


def live_documents(segments: Sequence[Segment], runs: list[list[SourceRun]]) -> int:
    """How many documents the live passages hold (a run counts its documents)."""
    return sum(
        r.documents
        for dead, part in zip(_dead_after(segments), runs, strict=True)
        for r in part
        if r.source not in dead
    )


def combined_checksum(segments: Sequence[Segment]) -> str:
    """The corpus checksum of a segmented index: its segments' checksums and tombstones."""
    text = json.dumps([s.to_dict() for s in segments], sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class SegmentedPassages(Sequence[Passage]):
    """The live passages of an index's segments, numbered in order (base first); each read
    from its segment's `PassageFile` when asked for."""

    def __init__(
        self, parts: list[PassageFile], masks: list[np.ndarray], order: list[np.ndarray]
    ) -> None:
        self.parts = parts
        # each passage's place in a fresh index of the live passages (its file's path, then
        # its number in the file): how ties are ordered, as there
        self.order = order
        # each part's live passages by their number in the part
        self.live = [np.flatnonzero(m).astype(np.int64) for m in masks]
        self.masks = masks
        sizes = [len(live) for live in self.live]
        self.offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum(sizes, out=self.offsets[1:])

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def _locate(self, at: int) -> tuple[int, int]:
        part = int(np.searchsorted(self.offsets, at, side="right")) - 1
        return part, int(self.live[part][at - int(self.offsets[part])])

    @overload
    def __getitem__(self, at: int) -> Passage: ...
    @overload
    def __getitem__(self, at: slice) -> list[Passage]: ...
    def __getitem__(self, at: int | slice) -> Passage | list[Passage]:
        if isinstance(at, slice):
            return [self[i] for i in range(*at.indices(len(self)))]
        part, local = self._locate(range(len(self))[at])
        return self.parts[part][local]

    def __iter__(self) -> Iterator[Passage]:
        for part, mask in zip(self.parts, self.masks, strict=True):
            for passage, alive in zip(part, mask.tolist(), strict=True):
                if alive:
                    yield passage

    def global_number(self, part: int, local: np.ndarray) -> np.ndarray:
        """The numbers of live passages `local` of `part` among all live passages."""
        return self.offsets[part] + np.searchsorted(self.live[part], local)

    def ranked(
        self, hits: list[tuple[int, np.ndarray, np.ndarray]], k: int
    ) -> list[tuple[int, float]]:
        """The best `k` of several segments' live hits (part, local numbers, scores), as
        (live passage number, score), ties in a fresh index's order (`order`)."""
        if not hits:
            return []
        number = np.concatenate([self.global_number(part, local) for part, local, _ in hits])
        value = np.concatenate([score for _, _, score in hits])
        keys = np.concatenate([self.order[part][local] for part, local, _ in hits])
        best = np.lexsort((keys, -value))[:k]
        return [(int(number[i]), float(value[i])) for i in best]

    def position(self, passage_id: str) -> int | None:
        """The number of the live passage with `passage_id`, or None (newest segment first)."""
        for part in range(len(self.parts) - 1, -1, -1):
            local = self.parts[part].position(passage_id)
            if local is not None and self.masks[part][local]:
                return int(self.global_number(part, np.asarray([local]))[0])
        return None

    def prepare_lookups(self) -> None:
        for part in self.parts:
            part.prepare_lookups()


def load_passages(directory: Path, segments: Sequence[Segment], hint: str) -> SegmentedPassages:
    parts = []
    for segment in segments:
        found = PassageFile.scanned(directory / segment.folder / "passages.jsonl")
        if len(found) != segment.passages:
            raise IndexUnusable(
                f"the passages of segment '{segment.folder or '.'}' of {directory} do not match "
                f"its manifest; {hint}"
            )
        parts.append(found)
    runs = all_runs(directory, segments)
    return SegmentedPassages(parts, live_masks(segments, runs), _fresh_order(runs))


def _fresh_order(runs: list[list[SourceRun]]) -> list[np.ndarray]:
    """Each passage's rank in the order a whole write gives them: by its file's path (the
    sync writes files in path order), then by its number in its file."""
    paths = sorted({r.source for part in runs for r in part})
    rank = {path: n for n, path in enumerate(paths)}
    shift = max((r.count for part in runs for r in part), default=1)
    order = []
    for part in runs:
        total = sum(r.count for r in part)
        keys = np.zeros(total, dtype=np.int64)
        for r in part:
            keys[r.first : r.first + r.count] = rank[r.source] * shift + np.arange(r.count)
        order.append(keys)
    return order


def next_folder(directory: Path, segments: Sequence[Segment]) -> str:
    """The folder of the next segment: one number past the highest listed."""
    numbers = [int(Path(s.folder).name) for s in segments if s.folder]
    return f"{FOLDER}/{max(numbers, default=0) + 1:04d}"


def remove_unlisted(directory: Path, segments: Sequence[Segment]) -> None:
    """Segment folders no manifest lists (a sync killed before its manifest was swapped in)."""
    import shutil

    listed = {s.folder for s in segments}
    root = directory / FOLDER
    if root.is_dir():
        for folder in root.iterdir():
            if f"{FOLDER}/{folder.name}" not in listed:
                shutil.rmtree(folder, ignore_errors=True)


def write_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    """Swap in a manifest (sealed by the caller): the one step that makes a segment live."""
    atomic.write_json(directory / "manifest.json", manifest)
