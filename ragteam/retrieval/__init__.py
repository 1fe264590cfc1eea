"""Retrieval: corpus ingestion, BM25, dense, hybrid (RRF) and indexes on disk."""

from __future__ import annotations

import time

from ragteam.retrieval.corpus import Document, load_passages, read_documents
from ragteam.retrieval.index import Index, load_index, read_manifest
from ragteam.retrieval.kinds import KINDS, retriever_names
from ragteam.retrieval.sync import SyncReport, SyncSettings, build_index, sync_folder
from ragteam.trace import Step, Trace
from ragteam.types import Passage, Retrieved

__all__ = [
    "KINDS",
    "SyncReport",
    "SyncSettings",
    "Document",
    "Index",
    "build_index",
    "load_index",
    "load_passages",
    "read_documents",
    "read_manifest",
    "retriever_names",
    "retrieve_traced",
    "sync_folder",
]


def retrieve_traced(
    index: Index,
    trace: Trace,
    retrieved: Retrieved,
    role: str,
    query: str,
    k: int,
    method: str | None = None,
) -> list[Passage]:
    """Retrieve, record the call in the trace (query, k, passage ids and scores, seconds, cache
    hit) and hand the passages to `retrieved` (what the answer is checked against)."""
    cached = index.is_cached(query, k, method)
    started = time.perf_counter()
    found = index.retrieve(query, k, method)
    retrieved.add(found, query)
    trace.add(
        Step(
            kind="retrieve",
            role=role,
            input={"query": query, "k": k, "method": method or index.retriever},
            output=[
                {"id": p.id, "doc_id": p.doc_id, "title": p.title, "score": p.score}
                | ({"locator": p.locator.describe()} if p.locator else {})
                for p in found
            ],
            seconds=time.perf_counter() - started,
            cached=cached,
        )
    )
    return found
