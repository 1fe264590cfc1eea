"""An index's `passages.jsonl`: written from a stream of passages, one at a time, and read back
as a sequence that holds only each line's place (`PassageFile`), so a build hands a million
passages to its retriever kinds without holding their text."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import numpy as np

from ragteam.errors import IndexUnusable, InputError
from ragteam.retrieval.corpus import checksum_row
from ragteam.types import Locator, Passage


def passage_row(p: Passage) -> dict[str, Any]:
    row: dict[str, Any] = {"id": p.id, "title": p.title, "text": p.text, "doc_id": p.doc_id}
    if p.locator is not None:
        row["locator"] = p.locator.to_dict()
    return row


def passage_of(row: dict[str, Any]) -> Passage:
    """A passage from its line (KeyError, TypeError or ValueError when the line is damaged)."""
    where = row.get("locator")
    locator = Locator.from_dict(where) if isinstance(where, dict) else None
    return Passage(row["id"], row["title"], row["text"], row["doc_id"], locator=locator)


@dataclass(frozen=True)
class Written:
    """What writing the passages found: their count, documents and checksum, and where each
    line starts."""

    count: int
    documents: int
    checksum: str
    starts: np.ndarray
    runs: list[SourceRun] = field(default_factory=list)


@dataclass(frozen=True)
class SourceRun:
    """The passages of one source file, which a sync writes together: the file's path, the
    number of its first passage, how many there are and how many documents they hold. What a
    segmented index drops when the file changes (`ragteam.retrieval.segments`)."""

    source: str
    first: int
    count: int
    documents: int

    def to_list(self) -> list[Any]:
        return [self.source, self.first, self.count, self.documents]

    @classmethod
    def from_list(cls, row: list[Any]) -> SourceRun:
        """A run as `to_list` wrote it (ValueError when it is not)."""
        if not isinstance(row, list) or len(row) != 4 or not isinstance(row[0], str):
            raise ValueError(f"not a source run: {row!r}")
        return cls(row[0], int(row[1]), int(row[2]), int(row[3]))


def write_passages(path: Path, passages: Iterable[Passage]) -> Written:
    """Write `passages` to `path` as they come. Two passages with one id are refused (a
    citation must name one passage): ids are compared by 8-byte digests, so memory is 8 bytes
    a passage, and a clash is named by reading the file again."""
    digest, starts = hashlib.sha256(), [0]
    ids: list[bytes] = []
    docs: list[bytes] = []
    runs = _Runs()
    with path.open("wb") as handle:
        for p in passages:
            line = json.dumps(passage_row(p), ensure_ascii=False).encode("utf-8") + b"\n"
            handle.write(line)
            starts.append(starts[-1] + len(line))
            digest.update(checksum_row(p))
            ids.append(_short(p.id))
            docs.append(_short(p.doc_id))
            runs.add(p)
    lines = np.asarray(starts, dtype=np.int64)
    id_keys = np.frombuffer(b"".join(ids), dtype=np.uint64)
    if len(np.unique(id_keys)) != len(id_keys):
        _name_clash(PassageFile(path, lines))
    _save_tables(path, lines, id_keys)
    documents = len(np.unique(np.frombuffer(b"".join(docs), dtype=np.uint64)))
    return Written(len(ids), documents, digest.hexdigest(), lines, runs.done())


class _Runs:
    """The runs of passages of one source each, counted as the passages go by."""

    def __init__(self) -> None:
        self.runs: list[SourceRun] = []
        self._source: str | None = None
        self._first = self._documents = self._count = 0
        self._doc: str | None = None

    def add(self, p: Passage) -> None:
        source = p.locator.source if p.locator is not None else ""
        if source != self._source:
            self._close()
            self._source, self._first, self._documents, self._doc = source, self._count, 0, None
        if p.doc_id != self._doc:
            self._documents += 1
            self._doc = p.doc_id
        self._count += 1

    def _close(self) -> None:
        if self._source is not None:
            count = self._count - self._first
            self.runs.append(SourceRun(self._source, self._first, count, self._documents))

    def done(self) -> list[SourceRun]:
        self._close()
        self._source = None
        return self.runs


LINES, IDS = ".lines.npy", ".ids.npy"  # beside `passages.jsonl`: passages.lines.npy, ...


def _save_tables(path: Path, lines: np.ndarray, id_keys: np.ndarray) -> None:
    """The line starts and the table of ids beside the passages file, so that a load finds
    neither by reading the file (`PassageFile.scanned`): listed and checked with it."""
    np.save(path.with_suffix(LINES), lines)
    order = np.argsort(id_keys, kind="stable")
    np.save(path.with_suffix(IDS), np.stack([id_keys[order], order.astype(np.uint64)]))


def _short(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()


def _name_clash(written: PassageFile) -> None:
    """Raise the InputError naming two passages of one id (digests matched: read the file)."""
    where: dict[str, str] = {}
    for p in written:
        source = f"document '{p.doc_id}' of {p.locator.source if p.locator else '?'}"
        if p.id in where:
            raise InputError(
                f"passage id '{p.id}' comes from {where[p.id]} and from {source} (a document "
                "cut in several is named ID#0, ID#1, ...); ids must be unique: rename one"
            )
        where[p.id] = source


_ID_FIRST = b'{"id": "'  # how `passage_row` starts a line
SCAN_BYTES = 64 << 20  # a line-start scan reads the file this much at a time


class PassageFile(Sequence[Passage]):
    """The passages of a `passages.jsonl`, read when asked for: iterated in order, or one by
    its number (with the lines' starts known), or by its id (`position`: a table of 8-byte id
    digests made on first use, 16 bytes a passage). Memory is the starts and that table, not
    the passages: a million passages load in a second or two and hold about 24 MB.

    The file is opened once, when this is made, and every read goes through that descriptor
    (`os.pread`, at the offsets of this very file): a sync that renames a new generation into
    place meanwhile leaves this one readable as it was, so an answer running over the loaded
    index never reads the new file at the old file's offsets."""

    def __init__(
        self,
        path: Path,
        starts: np.ndarray,
        ids: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self.path, self._starts = path, starts  # where each line starts, and the file's end
        self._ids = ids  # sorted digests, positions: made on first use when not given
        self._lock = threading.Lock()
        self._fd = os.open(path, os.O_RDONLY)

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
            self._fd = None

    def __getstate__(self) -> dict[str, Any]:  # another process opens the file anew
        return {"path": self.path, "starts": self._starts}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], state["starts"])  # type: ignore[misc]

    def _read(self, start: int, end: int) -> bytes:
        """Bytes [start, end) of this generation of the file."""
        parts, at = [], start
        while at < end:
            chunk = os.pread(self._fd, end - at, at)
            if not chunk:
                break
            parts.append(chunk)
            at += len(chunk)
        return b"".join(parts)

    def _lines(self) -> Iterator[bytes]:
        """Every line in order, read SCAN_BYTES or so at a time (whole lines)."""
        first, count = 0, len(self)
        while first < count:
            last = first + 1
            top = int(self._starts[first]) + SCAN_BYTES
            while last < count and int(self._starts[last + 1]) <= top:
                last += 1
            block = self._read(int(self._starts[first]), int(self._starts[last]))
            base = int(self._starts[first])
            for n in range(first, last):
                yield block[int(self._starts[n]) - base : int(self._starts[n + 1]) - base]
            first = last

    @classmethod
    def scanned(cls, path: Path) -> PassageFile:
        """The file's passages, with the line starts and the table of ids written beside it
        when they are there and fit the file (an index written before them has neither), else
        its line starts found by a scan for line breaks (in chunks of SCAN_BYTES: memory
        stays bounded however large the file)."""
        stored = _stored_tables(path)
        if stored is not None:
            return cls(path, *stored)
        starts = [np.zeros(1, dtype=np.int64)]
        size = path.stat().st_size
        with path.open("rb") as handle:
            offset = 0
            while chunk := handle.read(SCAN_BYTES):
                breaks = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10)
                starts.append(breaks.astype(np.int64) + offset + 1)
                offset += len(chunk)
        lines = np.concatenate(starts)
        if size and lines[-1] != size:  # a last line without its line break
            lines = np.append(lines, size)
        return cls(path, lines if size else lines[:1])

    def __len__(self) -> int:
        return len(self._starts) - 1

    def __iter__(self) -> Iterator[Passage]:
        for number, line in enumerate(self._lines(), start=1):
            yield self._parsed(line, number)

    @overload
    def __getitem__(self, at: int) -> Passage: ...
    @overload
    def __getitem__(self, at: slice) -> list[Passage]: ...
    def __getitem__(self, at: int | slice) -> Passage | list[Passage]:
        if isinstance(at, slice):
            return [self[i] for i in range(*at.indices(len(self)))]
        at = range(len(self))[at]
        return self._parsed(self._read(int(self._starts[at]), int(self._starts[at + 1])), at + 1)

    def position(self, passage_id: str) -> int | None:
        """The number of the passage with `passage_id`, or None."""
        digests, positions = self._id_table()
        key = np.frombuffer(_short(passage_id), dtype=np.uint64)[0]
        at = int(np.searchsorted(digests, key))
        while at < len(digests) and digests[at] == key:  # a digest shared: check the ids
            found = int(positions[at])
            if self[found].id == passage_id:
                return found
            at += 1
        return None

    @property
    def lookups_ready(self) -> bool:
        """Whether the table of ids `position` reads is built (it is on first use)."""
        return self._ids is not None

    def prepare_lookups(self) -> None:
        """Build the table of ids now (2 s at a million passages), not at the first lookup."""
        self._id_table()

    def _id_table(self) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            if self._ids is None:
                keys = b"".join(_short(passage_id) for passage_id in self._id_column())
                digests = np.frombuffer(keys, dtype=np.uint64)
                order = np.argsort(digests, kind="stable")
                self._ids = (digests[order], order.astype(np.int64))
            return self._ids

    def _id_column(self) -> Iterator[str]:
        """Every passage's id in order, read off the start of its line (`passage_row` writes
        the id first) without parsing the rest; a line written otherwise is parsed whole."""
        scan = json.decoder.scanstring  # type: ignore[attr-defined]
        for number, raw in enumerate(self._lines(), start=1):
            if raw.startswith(_ID_FIRST):
                try:
                    yield scan(raw.decode("utf-8"), len(_ID_FIRST))[0]
                    continue
                except (UnicodeDecodeError, ValueError):
                    pass
            yield self._parsed(raw, number).id

    def _parsed(self, line: bytes, number: int) -> Passage:
        try:
            return passage_of(json.loads(line))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise IndexUnusable(
                f"{self.path}:{number} is corrupt; rebuild the index in {self.path.parent}"
            ) from exc


def _stored_tables(path: Path) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]] | None:
    """The line starts and id table saved beside `path`, if both are there and fit it."""
    lines_file, ids_file = path.with_suffix(LINES), path.with_suffix(IDS)
    if not (lines_file.is_file() and ids_file.is_file()):
        return None
    try:
        lines = np.load(lines_file)
        ids = np.load(ids_file)
    except (OSError, ValueError):
        return None
    count = len(lines) - 1
    fits = (
        lines.ndim == 1
        and count >= 0
        and int(lines[0]) == 0
        and int(lines[-1]) == path.stat().st_size
        and ids.shape == (2, count)
    )
    return (lines, (ids[0], ids[1].astype(np.int64))) if fits else None
