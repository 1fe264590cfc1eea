"""An index's manifest: what was built, from what, with which settings, and every file's size
and SHA-256. It is sealed with a digest of its own canonical JSON, so an edit by hand is
caught instead of trusted (a file list cut to sizes only, a changed stemmer), and it is read
into a typed `Manifest`: a field of the wrong shape is an `IndexUnusable` that names it, never
a traceback deep inside a load."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragteam.errors import IndexUnusable
from ragteam.retrieval.segments import Segment

# 2: sealed, and every file carries its SHA-256; 3: each searcher's settings in `params.<name>`
FORMAT_VERSION = 3
READS = (2, 3)
SEAL = "manifest_sha256"
HYBRID = "hybrid"  # bm25 and dense, fused by reciprocal rank


def seal(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with its seal (written last, by the build)."""
    return {**data, SEAL: digest_of(data)}


def digest_of(data: dict[str, Any]) -> str:
    body = {k: v for k, v in data.items() if k != SEAL}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class FileRecord:
    size: int
    sha256: str


@dataclass(frozen=True)
class SourceInfo:
    """Where the passages came from: a JSONL corpus (with its checksum) or a synced folder."""

    path: str = ""
    kind: str = "jsonl"
    checksum: str | None = None

    @property
    def is_folder(self) -> bool:
        return self.kind == "folder"


@dataclass(frozen=True)
class Manifest:
    """A verified manifest; `raw` is the JSON as written (what `index info` and the API show)."""

    format_version: int
    retriever: str
    searchers: tuple[str, ...]
    corpus_checksum: str
    files: dict[str, FileRecord]
    passage_count: int
    document_count: int
    source: SourceInfo
    passage_words: int = 100
    mmap: bool = False
    records: dict[str, dict[str, Any]] = field(default_factory=dict)  # searcher -> its params
    embedding_model: str | None = None
    built_at: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    # the segments, the whole index's own files first; none when it was written whole
    segments: tuple[Segment, ...] = ()
    # the loader asked for `mmap` as it is (`load_index(mmap=...)`): no choice by size
    mmap_asked: bool = field(default=False, compare=False)

    def with_mmap(self, mmap: bool) -> Manifest:
        return replace(self, mmap=mmap, mmap_asked=True)


class _Shape(Exception):
    """A field of the wrong shape (turned into `IndexUnusable` by `parse`)."""


def _take(data: dict[str, Any], key: str, kind: type) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise _Shape(key)
    return value


def _optional(data: dict[str, Any], key: str, kind: type, default: Any) -> Any:
    return default if data.get(key) is None else _take(data, key, kind)


def parse(
    data: object, path: Path, hint: Callable[[], str], digest: Callable[[], str] | None = None
) -> Manifest:
    """The typed manifest of the JSON `data` read from `path`; checks its format, its seal
    and the shape of every field, each with its own message. `digest` computes the seal
    (memoized by the caller per file version)."""
    if not isinstance(data, dict) or "format_version" not in data:
        raise IndexUnusable(f"{path} is incomplete; {hint()}")
    if data["format_version"] not in READS:
        raise IndexUnusable(
            f"the index at {path.parent} has format {data['format_version']}, this ragteam "
            f"reads formats {' and '.join(map(str, READS))}; {hint()}"
        )
    if data.get(SEAL) != (digest() if digest else digest_of(data)):
        raise IndexUnusable(
            f"{path} was edited after the build (its seal does not match); {hint()}"
        )
    try:
        return _typed(data)
    except _Shape as exc:
        raise IndexUnusable(f"{path} has fields of the wrong shape ({exc}); {hint()}") from exc


def _typed(data: dict[str, Any]) -> Manifest:
    retriever = _take(data, "retriever", str)
    searchers = tuple(_take(data, "searchers", list))
    single = searchers == (retriever,)
    if not searchers or not all(isinstance(x, str) for x in searchers):
        raise _Shape("searchers")
    if not single and (retriever != HYBRID or len(searchers) < 2):
        raise _Shape("retriever/searchers")
    files = {name: _file(name, record) for name, record in _take(data, "files", dict).items()}
    source = _optional(data, "source", dict, {})
    params = _optional(data, "params", dict, {})
    records = {name: record_of(data, params, name) for name in searchers}
    return Manifest(
        format_version=data["format_version"],
        retriever=retriever,
        searchers=searchers,
        corpus_checksum=_take(data, "corpus_checksum", str),
        files=files,
        passage_count=_take(data, "passage_count", int),
        document_count=_take(data, "document_count", int),
        source=SourceInfo(
            _optional(source, "path", str, ""),
            _optional(source, "kind", str, "jsonl"),
            _optional(source, "checksum", str, None),
        ),
        passage_words=_optional(params, "passage_words", int, 100),
        mmap=_optional(params, "mmap", bool, False),
        records=records,
        embedding_model=_optional(data, "embedding_model", str, None),
        built_at=_optional(data, "built_at", str, None),
        raw=data,
        segments=_segments(data),
    )


def _segments(data: dict[str, Any]) -> tuple[Segment, ...]:
    try:
        return tuple(Segment.from_dict(x) for x in _optional(data, "segments", list, []))
    except ValueError as exc:
        raise _Shape(f"segments: {exc}") from exc


def record_of(data: dict[str, Any], params: dict[str, Any], name: str) -> dict[str, Any]:
    """A searcher's recorded settings: `params.<name>` (format 2 kept dense's at the top)."""
    if data.get("format_version") == 2 and name == "dense":
        return _optional(data, "dense", dict, {})
    try:
        return _optional(params, name, dict, {})
    except _Shape as exc:
        raise _Shape(f"params.{name}") from exc


def _file(name: str, record: object) -> FileRecord:
    """A file entry needs its size and digest: a list cut to sizes only would turn the
    checksums off."""
    if not isinstance(record, dict):
        raise _Shape(f"files.{name}")
    size, digest = record.get("size"), record.get("sha256")
    if not isinstance(size, int) or isinstance(size, bool) or not isinstance(digest, str):
        raise _Shape(f"files.{name}")
    return FileRecord(size, digest)
