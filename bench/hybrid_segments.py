"""One changed file of a hybrid folder index at 78k passages (issue 89: 46.6 s before segments).

    python bench/hybrid_segments.py --corpus ../shared/data/train/train_corpus.jsonl \\
        --files 30000 --work /tmp/hseg

The folder is `bench/folder_scale.py`'s (30,000 files of two paragraphs: about 78k passages).
Its first sync runs in this process with the torch encoder's `encode` replaced by random unit
vectors (embedding 78k passages takes half an hour on 2 cores; the vectors go into the sync
cache under the real encoder's identity, so later syncs find them). Then one file changed
and one deleted, each synced as its own `ragteam index sync` process with the real encoder:
seconds, peak MB, passages embedded, segments after it. The first sync's peak is this
process's (the sync with random vectors, no encoder model: what holding the vectors and
building FAISS cost; `--files 115000` makes about 300k passages), and the peak of its own
memory (RssAnon, sampled: the peak RSS also counts the file pages mapped into it, such as
the vectors' memory map). Search quality over random vectors
means nothing here; only the syncs' cost is measured. Results as JSON lines on stdout."""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from folder_scale import make_folder, timed_sync  # noqa: E402


def random_vectors(self: object, texts: list[str], progress: object = None) -> np.ndarray:
    rng = np.random.default_rng(len(texts))
    vectors = rng.standard_normal((len(texts), 384)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


class AnonPeak:
    """The largest RssAnon (this process's own memory, not file pages mapped into it: the
    vectors' memory map, the page cache of the files it reads) seen every 50 ms, in MB."""

    def __init__(self) -> None:
        self.peak_mb = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._done.wait(0.05):
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("RssAnon:"):
                    self.peak_mb = max(self.peak_mb, int(line.split()[1]) / 1024)

    def __enter__(self) -> AnonPeak:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        self._thread.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--files", type=int, default=30000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/hseg"))
    args = parser.parse_args()
    folder, out = args.work / "docs", args.work / "ix"
    os.environ["XDG_CACHE_HOME"] = str(args.work / "cache")
    env = dict(os.environ)
    from ragteam.retrieval import sync_folder
    from ragteam.retrieval.encoders import TorchEncoder
    from ragteam.retrieval.index import IndexSettings

    make_folder(args.corpus, folder, args.files, 2)
    TorchEncoder.encode = random_vectors  # type: ignore[method-assign]
    shutil.rmtree(out, ignore_errors=True)  # a first sync
    began = time.perf_counter()
    with AnonPeak() as anon:
        report = sync_folder(folder, out, index=IndexSettings(retriever="hybrid"))
    passages = report.manifest.get("passage_count")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # this process's peak
    first = {
        "seconds": round(time.perf_counter() - began, 1),
        "passages": passages,
        "peak_mb": round(peak_mb),
        "peak_anon_mb": round(anon.peak_mb),
    }
    print(json.dumps({"first_sync_random_vectors": first}), flush=True)
    files = sorted(folder.rglob("*.txt"))
    files[0].write_text(files[0].read_text("utf-8") + "\nOne more line.\n", "utf-8")
    for name in ("one_changed", "one_deleted"):
        if name == "one_deleted":
            files[1].unlink()
        timed = timed_sync(folder, out, "hybrid", env)
        segments = json.loads((out / "manifest.json").read_text("utf-8")).get("segments", [])
        print(json.dumps({name: [*timed, len(segments)]}), flush=True)


if __name__ == "__main__":
    main()
