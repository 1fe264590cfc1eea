"""Reading a JSONL corpus of `{id, title, text}` and splitting it into passages (a folder of
documents is read by converters and synced: `ragteam.retrieval.sync`)."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ragteam.errors import InputError
from ragteam.jsonl import read_objects
from ragteam.types import Passage


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    text: str


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
    yield from read_jsonl_documents(path)


def read_jsonl_documents(path: Path) -> Iterator[Document]:
    for number, row in read_objects(path):
        if not isinstance(row.get("text"), str):
            raise InputError(f"{path}:{number}: expected an object with a string 'text'")
        doc_id = str(row.get("id", f"{path.stem}-{number}"))
        yield Document(doc_id, str(row.get("title") or ""), row["text"])


def split_passages(doc: Document, words: int = 100) -> list[Passage]:
    """Split a document into about `words`-word passages of even length.

    A document of up to 1.5x `words` stays whole and keeps its id; longer ones become
    `{id}#0`, `{id}#1`, ... `words <= 0` keeps every document whole.
    """
    tokens = doc.text.split()
    if not tokens:
        return []
    count = 1 if words <= 0 else max(1, round(len(tokens) / words))
    if count == 1 or len(tokens) <= 1.5 * words:
        return [Passage(doc.id, doc.title, " ".join(tokens), doc_id=doc.id)]
    size = math.ceil(len(tokens) / count)
    return [
        Passage(f"{doc.id}#{i}", doc.title, " ".join(tokens[i * size : (i + 1) * size]), doc.id)
        for i in range(count)
        if tokens[i * size : (i + 1) * size]
    ]


def load_passages(src: str | Path, words: int = 100) -> list[Passage]:
    passages: list[Passage] = []
    seen: set[str] = set()
    for doc in read_documents(src):
        if doc.id in seen:
            raise InputError(f"{src}: document id '{doc.id}' occurs twice; ids must be unique")
        seen.add(doc.id)
        passages.extend(split_passages(doc, words))
    ids: dict[str, str] = {}
    for p in passages:
        if p.id in ids:
            raise InputError(
                f"{src}: passage id '{p.id}' comes from document '{ids[p.id]}' and from "
                f"document '{p.doc_id}' (a split document's parts are named ID#0, ID#1, ...); "
                "rename one of the documents"
            )
        ids[p.id] = p.doc_id
    if not passages:
        raise InputError(f"{src} holds no text to index")
    return passages


def passages_checksum(passages: list[Passage], worded: bool = False) -> str:
    """The passages' checksum (an index's manifest holds it): ids, titles, texts and where
    each stands, not how that place is worded, so a release that rewords citations loads the
    indexes built before it. `worded`: as indexes built before 2026-11-26 (third session)
    computed it, with the locator's display text."""
    digest = hashlib.sha256()
    for p in passages:
        place = (p.locator.to_dict() if worded else p.locator.fields()) if p.locator else None
        row = [p.id, p.title, p.text] + ([place] if place is not None else [])
        digest.update(json.dumps(row, ensure_ascii=False).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


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
