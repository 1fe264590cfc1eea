"""A read source's passages: the pieces its conversion kept, named and placed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from ragteam.retrieval.sources import Source
from ragteam.types import Locator, Passage


def passages_of(source: Source) -> list[Passage]:
    """A read source's passages, each with its locator. A document's passages are named
    `DOC#N` (`DOC` alone when it is one passage); the document is the file (`DOC` its path)
    or, in a collection such as a JSONL corpus, a row (`DOC` its id, titled by its title)."""
    pieces = source.piece_list()
    docs = [piece.get("record") or source.path for piece in pieces]
    parts, seen = Counter(docs), Counter[str]()
    passages = []
    for doc, piece in zip(docs, pieces, strict=True):
        locator = _locator(source.path, piece)
        passages.append(
            Passage(
                f"{doc}#{seen[doc]}" if parts[doc] > 1 else doc,
                _title(source, piece),
                piece["text"],
                doc_id=doc,
                locator=locator,
            )
        )
        seen[doc] += 1
    return passages


def _title(source: Source, piece: dict[str, Any]) -> str:
    """A row of a collection is titled by its own title, if any; a file by its own, else by
    its name."""
    if piece.get("record"):
        return str(piece.get("title", ""))
    return source.title or Path(source.path).stem


def _locator(path: str, piece: dict[str, Any]) -> Locator:
    """The locator a cached piece records by its fields' names, in the file at `path`."""
    return Locator.from_dict({**piece, "source": path})
