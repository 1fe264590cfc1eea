"""Where a question is asked, besides what it asks (`AskRequest`): the index, the model and its
options, per-role models and the user's tools, declared once (`Where`), loaded once
(`Where.load` gives a `Loaded`), and the one place a strategy's `Context` is built from a
request (`Loaded.context`): `ragteam.answer`, `ragteam.evaluate` (its threads and its Ray
actors) and the server all come through it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ragteam.asking.request import AskRequest, key_values
from ragteam.llm import DEFAULT_MODEL, MODEL_SPECS, ChatModel, ModelOptions, load_model
from ragteam.llm.deferred import Deferred
from ragteam.retrieval.index import Index, load_index
from ragteam.settings import flag, group
from ragteam.strategies.base import Context, require_index
from ragteam.tools.base import Tool, make_tool
from ragteam.trace import Trace


@dataclass(frozen=True)
class Loaded:
    """What answers are given: the model (deferred until asked, for a strategy that may not
    need it), the index (None: no retrieval), per-role models and the user's tools."""

    model: ChatModel
    index: Index | None = None
    role_models: Mapping[str, ChatModel] = field(default_factory=dict)
    tools: tuple[Tool, ...] = ()

    def context(self, request: AskRequest, trace: Trace) -> Context:
        """The resources of one answer to `request`, its work said to `trace`."""
        return Context(
            self.model,
            self.index,
            trace,
            dict(self.role_models),
            self.tools,
            instructions=request.instructions,
            temperature=request.temperature,
        )


@dataclass(frozen=True)
class Where:
    """Where questions are asked: `index` a directory built by `ragteam index build` (or a
    loaded `Index`); `model` a spec ("embedded", "path/to/model.gguf", "openai:NAME") or a
    model object, loaded with `model_options`; `role_models` the model of single agent roles
    ({"planner": "openai:qwen2.5-7b"}); `tools` functions (typed, with a docstring) or `Tool`s
    for the strategies that call tools. The flagged fields are the flags of `ask` and `eval`
    (their tools come from `--tools` and `--mcp`, which run while the command does)."""

    index: str | Path | Index | None = flag(None, "index directory", kind=Path | None)
    model: str | ChatModel | None = flag(
        None,
        MODEL_SPECS,
        kind=str,
        cli_default=DEFAULT_MODEL,
    )
    model_options: ModelOptions = group(ModelOptions)
    role_models: Mapping[str, str | ChatModel] = flag(
        None,
        "ROLE=MODEL_SPEC, e.g. planner=openai:NAME; repeatable",
        factory=dict,
        name="--role-model",
        many=True,
        parse=lambda pairs: {k: str(v) for k, v in key_values(list(pairs)).items()},
    )
    tools: tuple[Tool | Callable[..., Any], ...] = ()

    def given(self) -> dict[str, Any]:
        """Its fields by name: `ragteam.answer`'s and `ragteam.evaluate`'s keywords."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def load(
        self, strategy: str = "", needs_index: bool = False, needs_model: bool = True
    ) -> Loaded:
        """Everything loaded once: the index first, and for a strategy that retrieves
        (`needs_index`) refused without one before any model is loaded; the model now, or
        deferred until a stage asks it something when the strategy answers without one
        (`needs_model` False); each role's model; the tools."""
        index = self.index
        loaded = index if isinstance(index, Index) or index is None else load_index(index)
        if needs_index:
            require_index(strategy, loaded)
        return Loaded(
            self._model(needs_model),
            loaded,
            {role: self._loaded(spec) for role, spec in self.role_models.items()},
            tuple(make_tool(t) for t in self.tools),
        )

    def _model(self, needed: bool) -> ChatModel:
        if self.model is not None and not isinstance(self.model, str):
            return self.model
        if needed:
            return load_model(self.model, self.model_options)
        spec, options = self.model, self.model_options
        return Deferred(lambda: load_model(spec, options))

    def _loaded(self, spec: str | ChatModel) -> ChatModel:
        return spec if not isinstance(spec, str) else load_model(spec, self.model_options)
