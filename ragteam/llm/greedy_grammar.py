"""Schema-constrained greedy decoding for llama.cpp that checks one token, not the vocabulary.

llama-cpp-python applies a JSON-schema grammar to all ~50k candidate tokens at every step: on
the embedded 135M model that costs about 7 ms a token, as much as the model itself. At
temperature 0 the answer is the highest-scoring token the grammar allows, so it is enough to ask
the grammar about the model's favourite first and to mask the whole vocabulary only when the
grammar rejects it (llama.cpp's own `common_sampler` does the same). The output is identical.
"""

from __future__ import annotations

import ctypes
import json
from typing import Any

import numpy as np

_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])


def schema_grammar(schema: dict[str, Any]) -> str | None:
    """The GBNF grammar llama-cpp-python derives from a JSON schema (None if it cannot)."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    try:
        return json_schema_to_gbnf(json.dumps(schema))
    except Exception:  # noqa: BLE001 - its converter raises bare Exceptions on odd schemas
        return None


class GreedyGrammar:
    """A llama-cpp-python logits processor enforcing `grammar` for greedy decoding. One
    instance serves one completion: it follows the tokens the model appends to the prompt."""

    def __init__(self, vocab: Any, grammar: str, n_vocab: int) -> None:
        import llama_cpp

        self._lib = llama_cpp
        self._sampler = llama_cpp.llama_sampler_init_grammar(
            vocab, grammar.encode("utf-8"), b"root"
        )
        if not self._sampler:
            raise ValueError("llama.cpp could not parse the grammar")
        self._all = (llama_cpp.llama_token_data * n_vocab)()
        self._view = np.frombuffer(self._all, dtype=_TOKEN_DATA)
        self._one = (llama_cpp.llama_token_data * 1)()
        self._seen: int | None = None
        self.full_masks = 0  # steps where the model's favourite broke the grammar

    def __call__(self, input_ids: np.ndarray, logits: np.ndarray) -> np.ndarray:
        self._accept_new(input_ids)
        best = int(np.argmax(logits))
        if self._allows(best, float(logits[best])):
            return logits
        self.full_masks += 1
        self._view["id"] = np.arange(len(self._view), dtype=np.int32)
        self._view["logit"] = logits
        self._view["p"] = 0.0
        self._apply(self._all, len(self._view))
        return self._view["logit"].copy()

    def close(self) -> None:
        if self._sampler:
            self._lib.llama_sampler_free(self._sampler)
            self._sampler = None

    def __del__(self) -> None:  # pragma: no cover - depends on the garbage collector
        self.close()

    def _accept_new(self, input_ids: np.ndarray) -> None:
        """Advance the grammar over the tokens sampled since the last step."""
        if self._seen is not None:
            for token in input_ids[self._seen :]:
                self._lib.llama_sampler_accept(self._sampler, int(token))
        self._seen = len(input_ids)

    def _allows(self, token: int, logit: float) -> bool:
        self._one[0].id, self._one[0].logit, self._one[0].p = token, logit, 0.0
        self._apply(self._one, 1)
        return bool(np.isfinite(self._one[0].logit))

    def _apply(self, data: ctypes.Array, size: int) -> None:
        lib = self._lib
        array = lib.llama_token_data_array(
            data=ctypes.cast(data, lib.llama_token_data_p), size=size, selected=-1, sorted=False
        )
        lib.llama_sampler_apply(self._sampler, ctypes.byref(array))
