"""Retriever kinds: what an index can search with, registered like every other named thing
(`ragteam.plugins.Registry`; built-ins `bm25` and `dense`, plugins in the `ragteam.retrievers`
entry-point group). A kind builds its files into the index folder from the passages and
says what to record of its settings in the manifest (`params.<name>`), and loads them back
into a `Searcher`. `hybrid` is not a kind: it fuses the searchers of an index that has
`bm25` and `dense` by reciprocal rank."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ragteam.errors import RagteamError
from ragteam.plugins import Registry
from ragteam.retrieval.bm25 import STEMMER
from ragteam.retrieval.dense import DenseSettings
from ragteam.retrieval.encoders import EncoderSpec
from ragteam.retrieval.manifest import HYBRID, Manifest, record_of
from ragteam.settings import flag, group
from ragteam.types import Passage

# passage texts, the encoder to use, progress -> their vectors (computed elsewhere, e.g. Ray)
RemoteEncode = Callable[[list[str], EncoderSpec, Any], Any]


@runtime_checkable
class BatchedEncode(Protocol):
    """A `RemoteEncode` that can also hand its vectors back batch by batch as they finish
    (rows of `texts`, their vectors), so a sync stores each batch before the next: a cluster
    lost midway costs only the batches not yet back."""

    def __call__(self, texts: list[str], spec: EncoderSpec, progress: Any) -> Any: ...

    def batches(self, texts: list[str], spec: EncoderSpec) -> Iterator[tuple[Any, Any]]: ...


BuildProgress = Callable[[str, int, int], None]  # (phase, done, total)
FUSED = ("bm25", "dense")  # what `hybrid` builds and fuses


@dataclass(frozen=True)
class IndexSettings:
    """How passages are indexed: which retriever, and the built-in kinds' settings (BM25
    stemmer; dense encoder and FAISS type). A plugin kind keeps its own settings."""

    retriever: str = flag(HYBRID, "bm25 | dense | hybrid | an installed retriever kind's name")
    passage_words: int = 100
    bm25_stemmer: str = flag(STEMMER, "Snowball language, or none")
    dense: DenseSettings = group(DenseSettings)
    mmap: bool = flag(False, "map BM25/FAISS files at load")

    @property
    def searchers(self) -> list[str]:
        return list(FUSED) if self.retriever == HYBRID else [self.retriever]


@dataclass(frozen=True)
class BuildJob:
    """What a kind's build is given besides the passages: the settings, where the vectors
    may be computed (`encode`, e.g. on Ray), who hears of progress, the whole index this one
    replaces (`previous`: what it kept may spare work) and `stats`, where a kind counts what
    it did (e.g. `tokenized`)."""

    settings: IndexSettings
    encode: RemoteEncode | None = None
    progress: BuildProgress | None = None
    previous: Path | None = None
    stats: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Built:
    """What a kind's build records in the manifest: its settings (`params.<name>`) and the
    embedding model its vectors came from, if it has vectors."""

    params: dict[str, Any]
    embedding_model: str | None = None


class Searcher(Protocol):
    def search(self, query: str, k: int) -> list[tuple[int, float]]: ...


@runtime_checkable
class Vocabulary(Protocol):
    """A searcher that keeps the words its passages hold (BM25's)."""

    def knows(self, word: str) -> bool: ...


@runtime_checkable
class RetrieverKind(Protocol):
    """A retriever kind. Its files are named after it (`<name>`, `<name>.*`, `<name>-*` or a
    `<name>/` folder): those are what the manifest lists and checks."""

    name: str

    def build(self, passages: Sequence[Passage], directory: Path, job: BuildJob) -> Built: ...

    def load(
        self, directory: Path, passages: list[Passage], params: dict[str, Any], manifest: Manifest
    ) -> Searcher: ...

    def restore(self, params: dict[str, Any], settings: IndexSettings) -> IndexSettings:
        """`settings` with this kind's part as the manifest recorded it (a resync)."""
        ...

    def rebuild_flags(self, params: dict[str, Any]) -> str:
        """The `index build` flags that rebuild this kind as recorded ("" for the defaults)."""
        ...


KINDS = Registry(
    "retriever",
    "ragteam.retrievers",
    {
        "bm25": "ragteam.retrieval.builtin_kinds:BM25",
        "dense": "ragteam.retrieval.builtin_kinds:DENSE",
    },
)


def retriever_names() -> list[str]:
    """Every `--retriever` choice: the registered kinds, and `hybrid`."""
    return [*KINDS.names(), HYBRID]


def kind(name: str) -> RetrieverKind:
    """The registered kind `name` (an `UnknownName` listing the others if there is none)."""
    found = KINDS.load(name)
    if not isinstance(found, RetrieverKind):
        raise RagteamError(
            f"the retriever '{name}' is not a retriever kind (it needs name, build, load, "
            "restore and rebuild_flags); see docs/extending.md"
        )
    return found


SYNC_PASSAGE_TOKENS = 128  # the passage budget a sync cuts to when none is given


def retriever_on_disk(directory: Path) -> str | None:
    """The built-in retriever an index's files say it was built with (its BM25 folder, its
    FAISS files, or both), for a manifest too damaged to say; None when neither is there."""
    bm25 = (directory / "bm25").exists()
    dense = any(directory.glob("dense*.faiss"))
    if bm25 and dense:
        return HYBRID
    return "bm25" if bm25 else "dense" if dense else None


def rebuild_hint(directory: Path, manifest: dict[str, Any] | None = None) -> str:
    """The command that rebuilds the index as it was built (its non-default settings too,
    each kind saying its own); best effort from a manifest that may be damaged."""
    manifest = manifest or {}
    source = manifest.get("source") if isinstance(manifest.get("source"), dict) else {}
    params = manifest.get("params") if isinstance(manifest.get("params"), dict) else {}
    src = source.get("path") or "SRC"
    retriever = manifest.get("retriever") or retriever_on_disk(directory) or HYBRID
    extra = ""
    if "passage_tokens" in source:  # synced: cut by the tokens of the embedding model
        if source["passage_tokens"] != SYNC_PASSAGE_TOKENS:
            extra += f" --passage-tokens {source['passage_tokens']}"
    elif params.get("passage_words", 100) != 100:  # a JSONL index built before it was synced
        extra += f" --passage-words {params['passage_words']}"
    searchers = manifest.get("searchers") if isinstance(manifest.get("searchers"), list) else []
    for name in searchers:
        if isinstance(name, str) and name in KINDS:
            with contextlib.suppress(Exception):  # a hint from a damaged manifest
                extra += KINDS.load(name).rebuild_flags(record_of(manifest, params, name))
    return (
        f"rebuild it with `ragteam index build {src} --out {directory} "
        f"--retriever {retriever}{extra}`"
    )
