"""`ragteam index build --ray ADDRESS`: passages encoded by Ray Data `map_batches` over
encoder actors (one model each); the vectors come back to the driver, which writes the same
index files as a local build."""

from __future__ import annotations

from typing import Any

import numpy as np

from ragteam.retrieval.encoder_registry import make_encoder
from ragteam.retrieval.encoders import EncodeProgress, EncoderSpec
from ragteam.retrieval.index import RemoteEncode
from ragteam.scale.cluster import connected

BATCH = 256


class EncodeBatch:
    """A Ray Data callable class: one encoder per actor, reused for every batch."""

    def __init__(self, spec: EncoderSpec) -> None:
        self.encoder = make_encoder(spec)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        vectors = self.encoder.encode([str(t) for t in batch["text"]])
        return {"row": batch["row"], "vector": vectors}


def encode_on_ray(
    texts: list[str],
    spec: EncoderSpec,
    *,
    address: str,
    actors: int = 0,
    cpus_per_actor: float = 1.0,
    progress: EncodeProgress | None = None,
) -> np.ndarray:
    """Unit-length vectors of `texts`, in order, encoded across the cluster."""
    with connected(address) as ray:
        import ray.data

        count = actors or max(1, int(ray.cluster_resources().get("CPU", 1) // cpus_per_actor))
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False  # library code prints nothing; we report below
        items = ray.data.from_items([{"row": i, "text": t} for i, t in enumerate(texts)])
        encoded = items.map_batches(
            EncodeBatch,
            fn_constructor_args=(spec,),
            batch_size=BATCH,
            concurrency=count,
            num_cpus=cpus_per_actor,
            batch_format="numpy",
        )
        out: np.ndarray | None = None
        done = 0
        for batch in encoded.iter_batches(batch_size=BATCH, batch_format="numpy"):
            vectors: Any = np.stack(batch["vector"]).astype("float32")
            if out is None:
                out = np.zeros((len(texts), vectors.shape[1]), dtype="float32")
            out[batch["row"]] = vectors
            done += len(vectors)
            if progress:
                progress(done, len(texts))
    return out if out is not None else np.zeros((0, 0), dtype="float32")


def ray_encoder(address: str, actors: int = 0, cpus_per_actor: float = 1.0) -> RemoteEncode:
    """What `build_index(encode=...)` takes to encode the passages on the Ray cluster at
    `address` (the driver still writes the index)."""

    def encode(texts: list[str], spec: EncoderSpec, progress: Any) -> np.ndarray:
        return encode_on_ray(
            texts,
            spec,
            address=address,
            actors=actors,
            cpus_per_actor=cpus_per_actor,
            progress=progress,
        )

    return encode
