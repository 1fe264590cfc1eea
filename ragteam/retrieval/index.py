"""An index is a directory: manifest.json, passages.jsonl and each retriever's files."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragteam._version import __version__
from ragteam.common import atomic
from ragteam.errors import (
    IndexBusy,
    IndexUnusable,
    RagteamError,
    StorageError,
    UnknownName,
)
from ragteam.retrieval import swap
from ragteam.retrieval.digests import MEMO, file_digests, verify_files, verify_source
from ragteam.retrieval.kinds import (
    FUSED,
    HYBRID,
    BuildJob,
    BuildProgress,
    IndexSettings,
    RemoteEncode,
    RetrieverKind,
    Searcher,
    Vocabulary,
    kind,
    rebuild_hint,
    retriever_names,
)
from ragteam.retrieval.manifest import (
    FORMAT_VERSION,
    Manifest,
    digest_of,
    parse,
    seal,
)
from ragteam.retrieval.passage_file import PassageFile, write_passages
from ragteam.retrieval.segments import SegmentedPassages, load_passages, write_runs
from ragteam.types import Passage

# reciprocal rank fusion's constant, applied when searching (an index built under another
# records it, for information only): 5, chosen over the usual 60 on held training questions
# (`bench/fusion.py`, docs/benchmarks.md §36: recall@5 +0.014, +0.004 to +0.025), since a
# passage only one ranking finds first (a table row BM25 matches word for word) should not
# fall below passages both rank middling
RRF_K = 5
CACHE_SIZE = 4096


@dataclass
class Index:
    """A loaded index. `retrieve` is cached and thread-safe."""

    directory: Path
    manifest: Manifest
    passages: Sequence[Passage]  # a `PassageFile` when loaded: read from disk when asked for
    searchers: dict[str, Searcher]
    _cache: OrderedDict[tuple[str, str, int], list[Passage]] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _at: Callable[[str], int | None] = field(init=False)

    def __post_init__(self) -> None:
        if isinstance(self.passages, PassageFile | SegmentedPassages):
            self._at = self.passages.position
        else:
            self._at = {p.id: i for i, p in enumerate(self.passages)}.get

    @property
    def retriever(self) -> str:
        return self.manifest.retriever

    def prepare_lookups(self) -> None:
        """Ready the lookup of a passage by its id (a server calls it, in a thread, at load)."""
        if isinstance(self.passages, PassageFile | SegmentedPassages):
            self.passages.prepare_lookups()

    def passage(self, passage_id: str) -> Passage | None:
        at = self._at(passage_id)
        return None if at is None else self.passages[at]

    def mentions(self, word: str) -> bool | None:
        """Whether some passage holds `word`, by a searcher that keeps its passages' words
        (BM25's vocabulary); None when none of this index's searchers does (dense only)."""
        for searcher in self.searchers.values():
            if isinstance(searcher, Vocabulary):
                return searcher.knows(word)
        return None

    def neighbours(self, passage_id: str, n: int = 1) -> tuple[list[Passage], list[Passage]]:
        """The up to `n` passages before and after `passage_id` in its own document, in the
        document's order (none for an unknown id or a passage without a document)."""
        at = self._at(passage_id)
        if at is None or not n:
            return [], []
        doc = self.passages[at].doc_id
        if not doc:
            return [], []
        first, last = at, at
        while first > 0 and at - first < n and self.passages[first - 1].doc_id == doc:
            first -= 1
        end = len(self.passages) - 1
        while last < end and last - at < n and self.passages[last + 1].doc_id == doc:
            last += 1
        return self.passages[first:at], self.passages[at + 1 : last + 1]

    def retrieve(self, query: str, k: int = 5, method: str | None = None) -> list[Passage]:
        """Top-k passages (with scores) for `query`, by the index's retriever or `method`."""
        method = method or self.retriever
        if method not in self._methods():
            raise UnknownName("retriever for this index", method, self._methods())
        key = (method, query, k)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        hits = self._fuse(query, k) if method == HYBRID else self.searchers[method].search(query, k)
        found = [replace(self.passages[i], score=round(s, 6)) for i, s in hits[:k]]
        with self._lock:
            self._cache[key] = found
            if len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return found

    def is_cached(self, query: str, k: int, method: str | None = None) -> bool:
        with self._lock:
            return (method or self.retriever, query, k) in self._cache

    def _methods(self) -> list[str]:
        methods = list(self.searchers)
        return [*methods, HYBRID] if set(FUSED) <= set(methods) else methods

    def _fuse(self, query: str, k: int) -> list[tuple[int, float]]:
        depth = max(50, 4 * k)
        fused: dict[int, float] = {}
        for searcher in (self.searchers[name] for name in FUSED):
            for rank, (i, _score) in enumerate(searcher.search(query, depth)):
                fused[i] = fused.get(i, 0.0) + 1.0 / (RRF_K + rank + 1)
        return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


WRITER_WAIT_S = 10.0


@contextlib.contextmanager
def one_writer(out: str | Path) -> Iterator[None]:
    """Hold the index's writer lock (a file beside it) for a build or a sync; a second writer
    waits `WRITER_WAIT_S`, then is refused with `IndexBusy` (never interleaves)."""
    from filelock import FileLock, Timeout

    out = Path(out).expanduser().resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(out.parent / f".{out.name}.lock"), timeout=WRITER_WAIT_S)
    try:
        lock.acquire()
    except Timeout as exc:
        raise IndexBusy(
            f"another sync or build of {out} is running; wait for it to finish, then try again"
        ) from exc
    try:
        yield
    finally:
        lock.release()


def write_aside(
    out: str | Path,
    passages: Callable[[Path], Iterable[Passage]],
    source: dict[str, Any],
    settings: IndexSettings,
    encode: RemoteEncode | None = None,
    progress: BuildProgress | None = None,
    *,
    started: float | None = None,
    previous: Path | None = None,
    stats: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Write an index into a staging folder beside `out`, then swap it in: `out` is never
    half-written. `passages(staging)` gives the passages, streamed (a sync writes its state
    files into the staging folder first and reads its passages back from them). `previous`:
    the whole index at `out`, whose kept work (BM25's terms) the kinds may reuse; `stats`
    gets their counts."""
    if settings.retriever not in retriever_names():
        raise UnknownName("retriever", settings.retriever, retriever_names())
    started = time.perf_counter() if started is None else started
    out = Path(out).expanduser().resolve()
    remove_dead_staging(out)
    swap.recover(out, _alive)
    replaced = (out / "manifest.json").is_file()
    staging = out.parent / f".{out.name}.building-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        job = BuildJob(settings, encode, progress, previous, {} if stats is None else stats)
        manifest = _write_index(staging, passages(staging), source, job)
        manifest["build_seconds"] = round(time.perf_counter() - started, 3)
        manifest = seal(manifest)
        atomic.write_json(staging / "manifest.json", manifest)
        swap.swap_in(staging, out)
    except ConnectionError:  # a network's failure (an encoder elsewhere), not the disk's
        raise
    except OSError as exc:  # a full disk: the index at `out`, if any, is untouched
        raise StorageError.writing(f"the index at {out}", exc) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {**manifest, "replaced": replaced}


def remove_dead_staging(out: Path) -> None:
    """Staging folders of builds that were killed (their process is gone) are deleted."""
    for folder in out.parent.glob(f".{out.name}.building-*"):
        pid = folder.name.rpartition("-")[2]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write_index(
    directory: Path, passages: Iterable[Passage], source: dict[str, Any], job: BuildJob
) -> dict[str, Any]:
    settings = job.settings
    path = directory / "passages.jsonl"
    written = write_passages(path, passages)
    write_runs(directory, written.runs)
    stored = PassageFile(path, written.starts)  # the kinds read it back, a passage at a time
    built = {name: kind(name).build(stored, directory, job) for name in settings.searchers}
    embedding = next((b.embedding_model for b in built.values() if b.embedding_model), None)
    return {
        "format_version": FORMAT_VERSION,
        "ragteam_version": __version__,
        "retriever": settings.retriever,
        "searchers": settings.searchers,
        "embedding_model": embedding,
        "passage_count": written.count,
        "document_count": written.documents,
        "corpus_checksum": written.checksum,
        "source": source,
        "params": {
            "passage_words": settings.passage_words,
            **{name: b.params for name, b in built.items()},
            "rrf_k": RRF_K,
            "mmap": settings.mmap,
        },
        "files": file_digests(directory),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def recover_swap(directory: str | Path) -> None:
    """Put back the index a sync killed in the middle of its swap left beside `directory`
    (what every load does first; `index info` too)."""
    swap.recover(Path(directory).expanduser().resolve(), _alive)


def load_index(
    directory: str | Path, *, check_source: bool = True, mmap: bool | None = None
) -> Index:
    """Load and verify an index; every problem is an `IndexUnusable` saying how to rebuild.
    `mmap` maps the BM25 and FAISS files instead of reading them (default: as built)."""
    directory = Path(directory).expanduser().resolve()
    recover_swap(directory)
    manifest = read_manifest(directory)
    if mmap is not None:
        manifest = manifest.with_mmap(mmap)
    hint = rebuild_hint(directory, manifest.raw)
    verify_files(directory, manifest, hint, remember=True)
    if manifest.segments:
        return _load_segmented(directory, manifest, hint, check_source)
    # the file's bytes were just verified against the digest its sealed manifest lists (a
    # manifest always lists it: `verify_files`), so its text is not parsed here: its lines are
    # found, and each is read when asked for
    passages = PassageFile.scanned(directory / "passages.jsonl")
    if len(passages) != manifest.passage_count:
        raise IndexUnusable(f"the passages of {directory} do not match its manifest; {hint}")
    if check_source:
        verify_source(directory, manifest, hint)
    return Index(
        directory, manifest, passages, _load_searchers(directory, manifest, passages, hint)
    )


def _load_segmented(directory: Path, manifest: Manifest, hint: str, check_source: bool) -> Index:
    """An index of several segments (`ragteam.retrieval.segments`): BM25, dense or both."""
    from ragteam.retrieval.bm25_segments import SegmentedBM25
    from ragteam.retrieval.builtin_kinds import stemmer_of
    from ragteam.retrieval.dense_segments import SegmentedDense

    if not set(manifest.searchers) <= set(FUSED):
        raise IndexUnusable(f"{directory} lists segments, which only built-in kinds have; {hint}")
    passages = load_passages(directory, manifest.segments, hint)
    if len(passages) != manifest.passage_count:
        raise IndexUnusable(f"the passages of {directory} do not match its manifest; {hint}")
    if check_source:
        verify_source(directory, manifest, hint)
    folders = [s.folder for s in manifest.segments]
    searchers: dict[str, Searcher] = {}
    try:
        if "bm25" in manifest.searchers:
            params = manifest.records["bm25"]
            searchers["bm25"] = SegmentedBM25.load(
                directory, passages, folders, stemmer_of(params), params
            )
        if "dense" in manifest.searchers:
            recorded = [s.params.get("dense", manifest.records["dense"]) for s in manifest.segments]
            searchers["dense"] = SegmentedDense.load(
                directory, passages, folders, recorded, manifest.embedding_model, manifest.mmap
            )
    except IndexUnusable as exc:
        raise IndexUnusable(f"{exc}; {hint}") from exc
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
        raise IndexUnusable(
            f"could not read the index files in {directory} ({exc}); {hint}"
        ) from exc
    return Index(directory, manifest, passages, searchers)


def read_manifest(directory: Path) -> Manifest:
    """The index's typed manifest, its seal and shape checked (`ragteam.retrieval.manifest`)."""
    if not directory.is_dir():
        raise IndexUnusable(
            f"no index at {directory}; build one with `ragteam index build SRC --out {directory}`"
        )
    path = directory / "manifest.json"
    if not path.is_file():
        raise IndexUnusable(f"{directory} has no manifest.json; {rebuild_hint(directory)}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IndexUnusable(f"{path} is corrupt ({exc}); {rebuild_hint(directory)}") from exc
    raw = data if isinstance(data, dict) else None
    sealed = (lambda: MEMO.get("seal", [path], lambda: digest_of(data))) if raw else None
    return parse(data, path, lambda: rebuild_hint(directory, raw), sealed)


def _load_searchers(
    directory: Path, manifest: Manifest, passages: list[Passage], hint: str
) -> dict[str, Searcher]:
    searchers: dict[str, Searcher] = {}
    for name in manifest.searchers:
        found = _installed(name, directory, hint)
        params = manifest.records[name]
        try:  # the recorded settings read as the kind's own before any file is opened
            found.restore(params, IndexSettings())
        except (TypeError, ValueError, RagteamError) as exc:
            raise IndexUnusable(
                f"{directory / 'manifest.json'} has fields of the wrong shape "
                f"(params.{name}: {exc}); {hint}"
            ) from exc
        try:
            searchers[name] = found.load(directory, passages, params, manifest)
        except IndexUnusable as exc:  # the kind says what is wrong; the hint, how to fix it
            raise IndexUnusable(f"{exc}; {hint}") from exc
        except (OSError, ValueError, RuntimeError, KeyError, TypeError) as exc:
            raise IndexUnusable(
                f"could not read the index files in {directory} ({exc}); {hint}"
            ) from exc
    return searchers


def _installed(name: str, directory: Path, hint: str) -> RetrieverKind:
    try:
        return kind(name)
    except UnknownName as exc:
        raise IndexUnusable(
            f"the index at {directory} searches with the retriever '{name}', which is not "
            f"installed ({exc}); install the plugin that provides it, or {hint}"
        ) from exc


def settings_of(manifest: Manifest) -> IndexSettings:
    """The settings the index was built with, as its manifest records them."""
    settings = IndexSettings(manifest.retriever, manifest.passage_words, mmap=manifest.mmap)
    for name in manifest.searchers:
        settings = kind(name).restore(manifest.records[name], settings)
    return settings
