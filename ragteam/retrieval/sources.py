"""What a folder index knows of its source files (`sources.sqlite` in the index folder), and
the shared cache of conversions and embeddings (`paths.sync_cache_file()`), both SQLite.

A source row: relative path, size, mtime, content hash, converter and version, status
(`read`, `skipped`, `failed`), the reason or notes, the title and its passages' pieces. The
cache is keyed by content: a conversion by (bytes' SHA-256, converter, version, settings), an
embedding by (encoder identity, text's SHA-256), so unchanged text is never converted or
embedded twice, whatever its path or mtime, and a killed sync resumes from what it had done."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from ragteam.common.atomic import storage
from ragteam.errors import IndexUnusable

SOURCES_FILE = "sources.sqlite"


@dataclass
class Source:
    """One file of the indexed folder, as the last sync left it."""

    path: str
    size: int
    mtime_ns: int
    sha256: str = ""
    converter: str = ""
    status: str = "read"  # read | skipped | failed
    reason: str = ""
    notes: list[str] = field(default_factory=list)
    title: str = ""
    pieces: list[dict[str, Any]] = field(default_factory=list)
    # where the pieces are kept, not yet read (a row of the sources file `read_sources` read,
    # or of the cache's conversions): a sync holds no file's text, and one that rewrites
    # nothing, or writes an unchanged file's row again, never decodes them
    stored: Callable[[], str] | None = field(default=None, repr=False, compare=False)

    def piece_list(self) -> list[dict[str, Any]]:
        """The passages' pieces, read and decoded from where they are kept on each use (not
        kept here: a sync goes through every file once)."""
        return json.loads(self.stored()) if self.stored is not None else self.pieces

    def row(self) -> tuple[Any, ...]:
        return (
            self.path,
            self.size,
            self.mtime_ns,
            self.sha256,
            self.converter,
            self.status,
            self.reason,
            json.dumps(self.notes, ensure_ascii=False),
            self.title,
            self.stored() if self.stored else json.dumps(self.pieces, ensure_ascii=False),
        )

    def sealed_row(self) -> tuple[Any, ...]:
        """`row()` with its seal (`row_seal`) last."""
        row = self.row()
        return (*row, row_seal(row))


class DamagedSources(IndexUnusable):
    """The index's sync state (`sources.sqlite`) cannot be read, or a row of it is not what
    was written (its seal): a sync reads every file again (`sync_folder` does so itself)."""


def row_seal(row: tuple[Any, ...]) -> str:
    """The SHA-256 of a source row's fields (what `Source.row` gives): what a later read of
    the row checks, so that a changed byte in the state is never indexed as the file's text."""
    return hashlib.sha256(json.dumps(list(row), ensure_ascii=False).encode("utf-8")).hexdigest()


_COLUMNS = "path, size, mtime_ns, sha256, converter, status, reason, notes, title, pieces"
_RECORD = _COLUMNS.removesuffix(", pieces")  # a source without its pieces (read when needed)


def _connect(path: Path, check_same_thread: bool = True) -> sqlite3.Connection:
    """The sources file at `path`, its tables made if missing; DamagedSources when it is not
    a database (sqlite reads no schema from it)."""
    try:
        db = sqlite3.connect(str(path), timeout=30, check_same_thread=check_same_thread)
        db.execute(
            "CREATE TABLE IF NOT EXISTS sources (path TEXT PRIMARY KEY, size INTEGER, "
            "mtime_ns INTEGER, sha256 TEXT, converter TEXT, status TEXT, reason TEXT, "
            "notes TEXT, title TEXT, pieces TEXT, seal TEXT)"
        )
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
    except sqlite3.DatabaseError as exc:
        raise _damaged(path, exc) from exc
    return db


def _damaged(path: Path, why: object) -> DamagedSources:
    return DamagedSources(
        f"the index's sync state {path} is damaged ({why}): `ragteam index sync` reads "
        "every file again and rewrites it"
    )


def read_sources(directory: Path) -> tuple[dict[str, Source], dict[str, Any]]:
    """The sources of an index folder and its sync settings (empty when it has none). Their
    pieces stay in the file, read when asked for (the file is held open until the last
    source is gone, so a sync that replaces it meanwhile changes nothing they read)."""
    path = directory / SOURCES_FILE
    if not path.is_file():
        return {}, {}
    db = _connect(path, check_same_thread=False)
    try:
        rows = db.execute(f"SELECT {_RECORD} FROM sources").fetchall()
        sealed = "seal" in {r[1] for r in db.execute("PRAGMA table_info(sources)")}
        settings = _settings(db)
    except (sqlite3.DatabaseError, ValueError) as exc:
        db.close()
        raise _damaged(path, exc) from exc
    # a file written before rows were sealed has no seal column: its rows are taken as read
    query = f"SELECT pieces, {_RECORD}, seal" if sealed else "SELECT pieces"
    kept = _Rows(db, f"{query} FROM sources WHERE path = ?", path=path)
    sources = {
        r[0]: Source(*r[:7], _notes(r[7]), r[8], [], stored=functools.partial(kept.text, r[0]))
        for r in rows
    }
    return sources, settings


def read_settings(directory: Path) -> dict[str, Any]:
    """The sync settings an index folder recorded (empty when it has none), without reading
    its sources (28,000 rows at a million passages: 0.4 s)."""
    path = directory / SOURCES_FILE
    if not path.is_file():
        return {}
    db = _connect(path)
    try:
        return _settings(db)
    except (sqlite3.DatabaseError, ValueError) as exc:
        raise _damaged(path, exc) from exc
    finally:
        db.close()


def _settings(db: sqlite3.Connection) -> dict[str, Any]:
    meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    return json.loads(meta.get("settings", "{}"))


class _Rows:
    """One text column of an open SQLite file, by key; safe from any thread. It closes the
    connection when it goes only if it `owns` it (the cache closes its own). A query that
    also selects the row's other fields and its seal (after the text) has the seal checked:
    DamagedSources where the row is not what was written."""

    def __init__(
        self, db: sqlite3.Connection, query: str, owns: bool = True, path: Path | None = None
    ) -> None:
        self._db, self._query, self._lock, self._owns = db, query, threading.Lock(), owns
        self._path = path

    def text(self, key: str) -> str:
        try:
            with self._lock:
                row = self._db.execute(self._query, (key,)).fetchone()
        except sqlite3.DatabaseError as exc:
            raise _damaged(self._path or Path("?"), exc) from exc
        if row is None or row[0] is None:  # another process replaced what was kept
            raise IndexUnusable(
                f"the passages of '{key}' are no longer where the last read kept them; "
                "sync the index again"
            )
        if len(row) > 2 and row[-1] is not None and row_seal((*row[1:-1], row[0])) != row[-1]:
            raise _damaged(self._path or Path("?"), f"the row of '{key}' is not as written")
        return str(row[0])

    def __del__(self) -> None:
        if getattr(self, "_owns", False):
            self._db.close()


def read_back(path: Path) -> Iterator[Source]:
    """The read sources of a sources file, in path order, each with its pieces decoded: what
    a sync reads its passages back from, a file at a time."""
    db = _connect(path)
    try:
        cursor = db.execute(
            "SELECT path, title, pieces FROM sources WHERE status = 'read' ORDER BY path"
        )
        for path_, title, pieces in cursor:
            yield Source(path_, 0, 0, title=title, pieces=json.loads(pieces))
    finally:
        db.close()


def _notes(stored: str) -> list[str]:
    return [] if stored == "[]" else list(json.loads(stored))


def write_sources(path: Path, sources: Iterable[Source], settings: dict[str, Any]) -> None:
    """Write a new sources file: beside it first, then renamed over it (a kill in the middle
    leaves the previous list)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    db = _connect(tmp)
    try:
        with db:
            db.executemany(  # a row at a time: each source's pieces are read as it is written
                f"INSERT INTO sources ({_COLUMNS}, seal) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (s.sealed_row() for s in sources),
            )
            db.execute("INSERT INTO meta VALUES ('settings', ?)", (json.dumps(settings),))
        db.close()
        os.replace(tmp, path)
    finally:
        db.close()
        tmp.unlink(missing_ok=True)


def update_sources(path: Path, recorded: list[Source], deleted: list[str]) -> None:
    """A new sources file: the one at `path` with the rows of `recorded` written and those of
    `deleted` removed (a segment's sync: `ragteam.retrieval.segment_sync`). It is copied,
    changed beside it, then renamed over it, as `write_sources` does: a kill leaves the last
    one, and sources read from the last one read it as it was. The rows are made first: a
    recorded row may read its pieces from that file."""
    rows = [s.sealed_row() for s in recorded]
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        shutil.copyfile(path, tmp)
        db = _connect(tmp)
        try:
            with db:
                db.executemany("DELETE FROM sources WHERE path = ?", [(p,) for p in deleted])
                db.executemany(
                    f"INSERT OR REPLACE INTO sources ({_COLUMNS}, seal) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    rows,
                )
        except sqlite3.DatabaseError as exc:
            raise _damaged(path, exc) from exc
        finally:
            db.close()
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class SyncCache:
    """Conversions and embeddings by content, shared by every index on this machine."""

    def __init__(self, path: Path) -> None:
        self._where = f"the conversion and embedding cache {path}"
        with storage(self._where):
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), timeout=60)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS conversions (key TEXT PRIMARY KEY, value TEXT)"
            )
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS embeddings (encoder TEXT, text TEXT, vector BLOB, "
                "PRIMARY KEY (encoder, text))"
            )
        self._pieces = _Rows(
            self._db,
            "SELECT json_extract(value, '$.pieces') FROM conversions WHERE key = ?",
            owns=False,
        )

    def close(self) -> None:
        self._db.close()

    def conversion(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT value FROM conversions WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def kept_pieces(self, key: str) -> Callable[[], str]:
        """Where the pieces of the conversion under `key` are kept: read from here on use."""
        return functools.partial(self._pieces.text, key)

    def put_conversion(self, key: str, value: dict[str, Any]) -> None:
        with storage(self._where), self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO conversions VALUES (?, ?)",
                (key, json.dumps(value, ensure_ascii=False)),
            )

    def vectors(self, encoder: str, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            batch = keys[start : start + 500]
            marks = ",".join("?" * len(batch))
            rows = self._db.execute(
                f"SELECT text, vector FROM embeddings WHERE encoder = ? AND text IN ({marks})",
                (encoder, *batch),
            ).fetchall()
            found.update((k, np.frombuffer(v, dtype=np.float32)) for k, v in rows)
        return found

    def put_vectors(self, encoder: str, keys: list[str], vectors: np.ndarray) -> None:
        with storage(self._where), self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)",
                [
                    (encoder, k, np.asarray(v, dtype=np.float32).tobytes())
                    for k, v in zip(keys, vectors, strict=True)
                ],
            )


THIN_CHARS = 40  # a read file with fewer characters a page (or slide) than this is flagged


def source_dict(source: Source) -> dict[str, Any]:
    """A source as `index info` and the API show it (no passage texts): its state, passages,
    pages or slides, characters read, and a `warning` when a file counted as read gave almost
    nothing (its pages hold little text: scanned pages, or text the converter cannot reach)."""
    pieces = source.piece_list()
    data = {f.name: getattr(source, f.name) for f in fields(source)}
    del data["pieces"], data["stored"]
    data["notes"] = list(source.notes)
    pages = {p["page"] for p in pieces if p.get("page") is not None}
    slides = {p["slide"] for p in pieces if p.get("slide") is not None}
    chars = sum(p["end"] - p["start"] for p in pieces)
    data |= {"passages": len(pieces), "pages": len(pages), "slides": len(slides), "chars": chars}
    places = len(pages) or len(slides)
    data["warning"] = ""
    if source.status == "read" and places and chars / places < THIN_CHARS:
        data["warning"] = (
            f"little text was read: {chars / places:.0f} characters a "
            f"{'page' if pages else 'slide'}; if its pages are scanned, OCR them first"
        )
    return data
