"""`ragteam index build|sync --ray ADDRESS`: passages encoded by Ray Data `map_batches` over
encoder actors (one model each); the vectors come back to the driver, which writes the same
index files as a local build. A sync takes them batch by batch and stores each in its cache
as it comes back (`BatchedEncode`), so a cluster lost midway costs only what was not back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ragteam.retrieval.encoder_registry import make_encoder
from ragteam.retrieval.encoders import EncodeProgress, EncoderSpec
from ragteam.scale.cluster import ClusterLost, connected

BATCH = 256


class EncodeBatch:
    """A Ray Data callable class: one encoder per actor, reused for every batch."""

    def __init__(self, spec: EncoderSpec) -> None:
        self.encoder = make_encoder(spec)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        vectors = self.encoder.encode([str(t) for t in batch["text"]])
        return {"row": batch["row"], "vector": vectors}


class RayEncode:
    """Encodes texts on the Ray cluster at `address` ("auto": this machine's), with `actors`
    encoders (0: one per `cpus_per_actor` CPUs of the cluster). A `BatchedEncode`."""

    def __init__(self, address: str, actors: int = 0, cpus_per_actor: float = 1.0) -> None:
        self.address, self.actors, self.cpus_per_actor = address, actors, cpus_per_actor

    def batches(self, texts: list[str], spec: EncoderSpec) -> Iterator[tuple[Any, Any]]:
        """(rows of `texts`, their unit-length vectors) as each batch comes back, in any
        order; one connection and one set of actors for all of them."""
        if not texts:
            return
        with connected(self.address) as ray:
            import ray.data

            cpus = ray.cluster_resources().get("CPU", 1)
            count = self.actors or max(1, int(cpus // self.cpus_per_actor))
            context = ray.data.DataContext.get_current()
            context.enable_progress_bars = False  # library code prints nothing
            items = ray.data.from_items([{"row": i, "text": t} for i, t in enumerate(texts)])
            encoded = items.map_batches(
                EncodeBatch,
                fn_constructor_args=(spec,),
                batch_size=BATCH,
                concurrency=count,
                num_cpus=self.cpus_per_actor,
                batch_format="numpy",
            )
            try:
                for batch in encoded.iter_batches(batch_size=BATCH, batch_format="numpy"):
                    yield batch["row"], np.stack(batch["vector"]).astype("float32")
            except (ray.exceptions.RayError, ConnectionError) as exc:
                raise ClusterLost(
                    f"the Ray cluster at {self.address} failed while embedding "
                    f"({type(exc).__name__}: {str(exc)[:200]}); the vectors that came back are "
                    "kept: run the sync again (with --ray once the cluster is back, or without "
                    "it to embed here)"
                ) from exc

    def __call__(
        self, texts: list[str], spec: EncoderSpec, progress: EncodeProgress | None = None
    ) -> np.ndarray:
        """Unit-length vectors of `texts`, in order."""
        out: np.ndarray | None = None
        done = 0
        for rows, vectors in self.batches(texts, spec):
            if out is None:
                out = np.zeros((len(texts), vectors.shape[1]), dtype="float32")
            out[rows] = vectors
            done += len(vectors)
            if progress:
                progress(done, len(texts))
        return out if out is not None else np.zeros((0, 0), dtype="float32")


def ray_encoder(address: str, actors: int = 0, cpus_per_actor: float = 1.0) -> RayEncode:
    """What `build_index(encode=...)` and `sync_folder(encode=...)` take to encode the
    passages on the Ray cluster at `address` (the driver still writes the index)."""
    return RayEncode(address, actors, cpus_per_actor)
