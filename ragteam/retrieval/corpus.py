"""Reading a JSONL corpus of `{id, title, text}` as it stands (an index reads one through its
converter, `ragteam.documents.jsonl`, and cuts it like any file: `ragteam.retrieval.sync`),
and the checksums an index keeps of its passages and its source."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from ragteam.documents.jsonl import Document, read_rows
from ragteam.errors import InputError
from ragteam.types import Passage


def read_documents(src: str | Path) -> Iterator[Document]:
    """Documents from a JSONL file of `{id, title, text}`."""
    path = Path(src).expanduser()
    if path.is_dir():
        raise InputError(
            f"{path} is a folder: its documents are read by converters "
            f"(`ragteam index sync {path} --out INDEX`, or `ragteam.retrieval.sync.sync_folder`)"
        )
    if not path.is_file():
        raise InputError(f"no corpus at {path}: pass a JSONL file or a folder of documents")
    yield from read_rows(path)


def load_passages(src: str | Path) -> list[Passage]:
    """Every document of a JSONL corpus as one passage, whole (an index cuts them as it cuts
    any file: `ragteam.retrieval.build_index`)."""
    passages: list[Passage] = []
    for doc in read_documents(src):
        if doc.text.strip():
            passages.append(Passage(doc.id, doc.title, " ".join(doc.text.split()), doc.id))
    if not passages:
        raise InputError(f"{src} holds no text to index")
    return passages


def passages_checksum(passages: Iterable[Passage], worded: bool = False) -> str:
    """The passages' checksum (an index's manifest holds it): ids, titles, texts and where
    each stands, not how that place is worded, so a release that rewords citations loads the
    indexes built before it. `worded`: as indexes built before 2026-11-26 (third session)
    computed it, with the locator's display text."""
    digest = hashlib.sha256()
    for p in passages:
        digest.update(checksum_row(p, worded))
    return digest.hexdigest()


def checksum_row(p: Passage, worded: bool = False) -> bytes:
    """What one passage adds to `passages_checksum`."""
    place = (p.locator.to_dict() if worded else p.locator.fields()) if p.locator else None
    row = [p.id, p.title, p.text] + ([place] if place is not None else [])
    return json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n"


def source_files(path: Path) -> list[Path]:
    """The files a JSONL corpus is read from (a synced folder is followed by its sources)."""
    return [] if path.is_dir() else [path]


def source_checksum(src: str | Path) -> str:
    """A checksum of the source files' bytes, to tell when an index has gone stale."""
    path = Path(src).expanduser()
    files = source_files(path)
    digest = hashlib.sha256()
    for file in files:
        digest.update(str(file.relative_to(path) if path.is_dir() else file.name).encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()
