"""Where ragteam keeps what it makes again on demand: one cache folder (platformdirs' user cache
folder, so XDG_CACHE_HOME moves it), and the name of each part inside it. Every owner of a part
asks here, and `ragteam cache` lists the same parts."""

from __future__ import annotations

from pathlib import Path


def cache_root() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("ragteam"))


def merged_models_dir() -> Path:
    """Adapters merged into their base GGUF (`ragteam.llm.gguf_merge`)."""
    return cache_root() / "merged"


def assembled_models_dir() -> Path:
    """Model files joined from a package's shipped chunks (`ragteam.llm`)."""
    return cache_root() / "models"


def encoders_dir() -> Path:
    """ONNX exports of the embedded encoder (`ragteam.retrieval.onnx_encoder`)."""
    return cache_root() / "encoders"


def llm_cache_file() -> Path:
    """The LLM call cache (`ragteam.llm.cache`); SQLite adds `-wal` and `-shm` beside it."""
    return cache_root() / "llm-cache.sqlite"


DEMO_INDEX_PREFIX = "demo-index-"


def demo_index_dir(version: str) -> Path:
    """The demo corpus's index for one ragteam version (`ragteam.demo`)."""
    return cache_root() / f"{DEMO_INDEX_PREFIX}{version}"


CACHE_PARTS = ("merged", "models", "encoders", "demo", "llm")


def cache_parts() -> dict[str, list[Path]]:
    """Each part of the cache folder -> its entries (files or folders), as they are now."""
    root = cache_root()

    def children(folder: Path) -> list[Path]:
        return sorted(folder.iterdir()) if folder.is_dir() else []

    llm = llm_cache_file()
    return {
        "merged": children(merged_models_dir()),
        "models": children(assembled_models_dir()),
        "encoders": children(encoders_dir()),
        "demo": sorted(root.glob(f"{DEMO_INDEX_PREFIX}*")),
        "llm": sorted(llm.parent.glob(f"{llm.name}*")),
    }
