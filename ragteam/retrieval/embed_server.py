"""Embeddings from an OpenAI-compatible `/v1/embeddings` endpoint (TEI, vLLM, Infinity,
Ollama, llama.cpp's server): batched, several batches in flight, retried, normalized here."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import numpy as np

from ragteam.errors import IndexUnusable
from ragteam.retrieval.encoders import EncodeProgress, EncoderSpec

RETRIES = 3


class ServerEncoder:
    def __init__(self, spec: EncoderSpec, *, timeout: float = 120.0) -> None:
        self._spec = spec
        self.spec = spec.to_json()
        self.identity = f"openai:{spec.model}@{spec.base_url}"
        key = os.environ.get("OPENAI_API_KEY", "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(base_url=spec.base_url, timeout=timeout, headers=headers)

    def encode(self, texts: list[str], progress: EncodeProgress | None = None) -> np.ndarray:
        size = self._spec.batch
        batches = [texts[i : i + size] for i in range(0, len(texts), size)]
        rows: list[np.ndarray] = []
        done = 0
        with ThreadPoolExecutor(max_workers=max(1, self._spec.concurrency)) as pool:
            for block in pool.map(self._embed, batches):  # map keeps the batches' order
                rows.append(block)
                done += len(block)
                if progress:
                    progress(done, len(texts))
        if not rows:
            return np.zeros((0, 0), dtype="float32")
        vectors = np.concatenate(rows).astype("float32")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.clip(norms, 1e-12, None)

    def _embed(self, batch: list[str]) -> np.ndarray:
        body = {"model": self._spec.model, "input": batch}
        for attempt in range(RETRIES + 1):
            try:
                reply = self._client.post("/embeddings", json=body)
            except httpx.HTTPError as exc:
                if attempt == RETRIES:
                    raise IndexUnusable(
                        f"the embedding server at {self._spec.base_url} is unreachable ({exc}); "
                        "start it or pass another --embed-url"
                    ) from exc
            else:
                if reply.status_code < 500 and reply.status_code != 429:
                    return self._parse(reply, len(batch))
                if attempt == RETRIES:
                    raise IndexUnusable(
                        f"the embedding server answered {reply.status_code}: {reply.text[:200]}"
                    )
            time.sleep(min(8.0, 0.5 * 2**attempt))
        raise AssertionError("unreachable")

    def _parse(self, reply: httpx.Response, expected: int) -> np.ndarray:
        if reply.status_code != 200:
            raise IndexUnusable(
                f"the embedding server refused the request ({reply.status_code}): "
                f"{reply.text[:200]}; check the model name '{self._spec.model}'"
            )
        try:
            data: list[dict[str, Any]] = reply.json()["data"]
            ordered = sorted(data, key=lambda row: row.get("index", 0))
            vectors = np.stack([_pooled(row["embedding"]) for row in ordered])
        except (ValueError, KeyError, TypeError) as exc:
            raise IndexUnusable(
                f"the embedding server's reply is not an OpenAI embeddings list ({exc})"
            ) from exc
        if vectors.ndim != 2 or len(vectors) != expected:
            raise IndexUnusable(
                f"the embedding server returned {len(vectors)} vectors for {expected} texts "
                "(one vector per text expected)"
            )
        return vectors


def _pooled(embedding: list) -> np.ndarray:
    """One vector per text. A server without pooling (llama.cpp's for a chat model) sends one
    vector per token: those are averaged here."""
    array = np.asarray(embedding, dtype="float32")
    if array.ndim == 2:
        return array.mean(axis=0)
    if array.ndim != 1:
        raise ValueError(f"an embedding of shape {array.shape}")
    return array
