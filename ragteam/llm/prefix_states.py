"""KV snapshots of recent prompts, so that a role's long shared prefix is computed once.

llama.cpp keeps the KV state of the previous call only: when a strategy alternates roles
(planner, extractor, planner, ...) each role's instructions and worked examples are computed
again at every switch. `PrefixStates` keeps the KV state of the last few calls (llama.cpp's
per-sequence state copy, a few MB for a small model) and, before a call, restores the one that
shares the longest token prefix with the new prompt when that beats what the context holds.
llama-cpp-python then evaluates only the rest. Outputs do not change: the restored numbers are
the very ones computed before, and a wrong guess only costs time (llama-cpp-python compares
tokens itself before reusing anything).
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from typing import Any

import numpy as np

from ragteam.llm.base import Message


def common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    n = min(len(a), len(b))
    if n == 0:
        return 0
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n


class PrefixStates:
    """Snapshots of one llama-cpp-python `Llama`'s sequence 0, least recently used dropped
    first once `budget_bytes` is exceeded. Call `restore_for` before a completion and
    `remember` after it, under the model's lock."""

    def __init__(self, llm: Any, *, budget_bytes: int = 256 << 20, min_gain: int = 16) -> None:
        import llama_cpp

        self._lib = llama_cpp
        self._llm = llm
        self._budget = budget_bytes
        self._min_gain = min_gain
        self._states: OrderedDict[int, tuple[np.ndarray, ctypes.Array]] = OrderedDict()
        self._next = 0
        self._formatter = _chat_formatter(llm)
        self.restored_tokens = 0  # prompt tokens taken from snapshots instead of computed

    @property
    def usable(self) -> bool:
        return self._formatter is not None

    def prompt_tokens(self, messages: list[Message]) -> np.ndarray | None:
        """The tokens llama-cpp-python will build for `messages` (a guess: same template)."""
        if self._formatter is None:
            return None
        result = self._formatter(messages=messages)
        tokens = self._llm.tokenize(
            result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True
        )
        return np.asarray(tokens, dtype=np.int32)

    def restore_for(self, tokens: np.ndarray) -> int:
        """Load the snapshot sharing the longest prefix with `tokens` if it beats the live
        context by `min_gain` tokens; returns the tokens it saves."""
        llm = self._llm
        live = common_prefix(np.asarray(llm.input_ids[: llm.n_tokens]), tokens)
        best_key, best = None, live
        for key, (saved, _data) in self._states.items():
            shared = common_prefix(saved, tokens)
            if shared > best:
                best_key, best = key, shared
        if best_key is None or best - live < self._min_gain:
            return 0
        saved, data = self._states[best_key]
        self._states.move_to_end(best_key)
        memory = self._lib.llama_get_memory(llm._ctx.ctx)
        self._lib.llama_memory_seq_rm(memory, 0, -1, -1)
        if self._lib.llama_state_seq_set_data(llm._ctx.ctx, data, len(data), 0) != len(data):
            llm.reset()  # nothing usable is left in the context; llama.cpp recomputes all
            return 0
        llm.input_ids[: len(saved)] = saved
        llm.n_tokens = len(saved)
        llm._requires_eval = True  # logits are stale: llama-cpp-python re-evaluates one token
        self.restored_tokens += best - live
        return best - live

    def remember(self) -> None:
        """Snapshot the live context (prompt and completion of the call just made)."""
        llm = self._llm
        tokens = np.array(llm.input_ids[: llm.n_tokens], dtype=np.int32)
        if len(tokens) < self._min_gain:
            return
        for key, (saved, _data) in list(self._states.items()):
            if common_prefix(saved, tokens) == len(saved):  # the new snapshot covers it
                del self._states[key]
        size = self._lib.llama_state_seq_get_size(llm._ctx.ctx, 0)
        data = (ctypes.c_uint8 * size)()
        written = self._lib.llama_state_seq_get_data(llm._ctx.ctx, data, size, 0)
        if written != size or size > self._budget:
            return
        self._states[self._next] = (tokens, data)
        self._next += 1
        while sum(len(d) for _t, d in self._states.values()) > self._budget:
            self._states.popitem(last=False)


def _chat_formatter(llm: Any) -> Any:
    """llama-cpp-python's formatter for the GGUF's own chat template, when that is what the
    model uses (other chat formats get no snapshots: a guess would be wrong)."""
    template = llm.metadata.get("tokenizer.chat_template")
    if not template or llm.chat_format not in (None, "chat_template.default"):
        return None
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    model = llm._model
    eos, bos = model.token_eos(), model.token_bos()
    return Jinja2ChatFormatter(
        template=template,
        eos_token=model.token_get_text(eos) if eos != -1 else "",
        bos_token=model.token_get_text(bos) if bos != -1 else "",
        stop_token_ids=[eos],
    )
