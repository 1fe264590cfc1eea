"""Plugins found through real entry points: a package (a dist-info folder on sys.path) adds a
model backend, a strategy and a tool without touching ragteam."""

from __future__ import annotations

import sys
import textwrap
from typing import ClassVar

import pytest

import ragteam
from ragteam.errors import UnknownName
from ragteam.llm import load_model
from ragteam.strategies import available

PLUGIN = '''
from dataclasses import dataclass
from typing import ClassVar

from ragteam.llm import FakeModel
from ragteam.types import Answer
from ragteam.llm import Request


def echo_backend(name, options):
    return FakeModel(lambda messages, params: f"{name} says hi", identity=f"echo:{name}")


@dataclass
class Shout:
    name: ClassVar[str] = "shout"
    roles: ClassVar[tuple[str, ...]] = ("shouter",)
    needs_index: ClassVar[bool] = False
    needs_model: ClassVar[bool] = True
    decides_verdicts: ClassVar[bool] = False
    times: int = 1

    def run(self, posed, ctx):
        question = posed.text
        reply = ctx.model_for("shouter").complete(Request([{"role": "user", "content": question}]))
        return Answer(question, (reply.text.upper() + "!") * self.times, self.name, [], ctx.trace)


def double(x: int) -> int:
    """Twice a number."""
    return 2 * x
'''


@pytest.fixture
def plugin_on_path(tmp_path, monkeypatch):
    (tmp_path / "toy_plugin.py").write_text(textwrap.dedent(PLUGIN))
    info = tmp_path / "toy_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[ragteam.models]\necho = toy_plugin:echo_backend\n\n"
        "[ragteam.strategies]\nshout = toy_plugin:Shout\n\n"
        "[ragteam.tools]\ndouble = toy_plugin:double\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("toy_plugin", None)


def test_a_package_adds_a_backend_a_strategy_and_a_tool(plugin_on_path):
    from ragteam.tools import plugin_tools

    model = load_model("echo:bob", ragteam.llm.ModelOptions(cache=False))
    assert model.identity == "echo:bob"
    assert "shout" in available()
    result = ragteam.answer("hello?", strategy="shout", model="echo:bob", options={"times": 2})
    assert result.text == "BOB SAYS HI!BOB SAYS HI!"
    with pytest.raises(ragteam.InputError, match="unknown role"):
        ragteam.answer("x", strategy="shout", model="echo:bob", role_models={"planner": "echo:x"})
    [double] = plugin_tools()
    assert double.name == "double" and double.func(x=4) == 8


def test_an_unknown_scheme_lists_the_installed_ones(plugin_on_path):
    with pytest.raises(UnknownName) as info:
        load_model("nope:x")
    assert "echo:NAME" in str(info.value) and "openai:NAME" in str(info.value)


def test_every_kind_registers_one_way():
    """Strategies, model backends, tools, retrievers, encoders and converters: one `Registry`
    each, as docs/extending.md lists them; registering an object works like an import path."""
    import importlib
    import re
    from pathlib import Path

    from ragteam.plugins import Registry

    page = (Path(__file__).resolve().parents[1] / "docs" / "extending.md").read_text("utf-8")
    named = re.findall(r"\| `(ragteam[\w.]+)\.([A-Z]+)` \| `(ragteam\.\w+)` \|", page)
    assert len(named) == 6
    for module, attr, group in named:
        registry = getattr(importlib.import_module(module), attr)
        assert isinstance(registry, Registry) and registry.group == group
    scratch = Registry("widget", "ragteam.widgets", {"a": "ragteam.common.metrics:f1_score"})
    scratch.register("b", len)
    assert scratch.load("b") is len and scratch.load("a").__name__ == "f1_score"
    with pytest.raises(UnknownName, match="known: a, b"):
        scratch.load("c")
    scratch.unregister("b")
    with pytest.raises(UnknownName, match="known: a$"):
        scratch.load("b")


def test_a_backend_declares_what_it_can_do():
    """Parallel calls and the context window come from the backend's declaration, never from
    its name: a registered `Backend(parallel=True)` may serve concurrent requests, a bare
    factory declares nothing and serves one at a time (a server takes its calls in turn)."""
    from ragteam.llm import MODELS, Backend, FakeModel, ModelOptions, backend_of

    def make(name, options):
        return FakeModel(lambda messages, params: name, identity=f"x:{name}")

    MODELS.register("fast", Backend(make, parallel=True))
    MODELS.register("bare", make)
    try:
        assert backend_of("fast:a")[0].parallel and backend_of("fast:a")[1] == "a"
        assert not backend_of("bare:a")[0].parallel
        assert load_model("bare:a", ModelOptions(cache=False)).identity == "x:a"
        assert backend_of("smollm2")[0].window(ModelOptions(n_ctx=1234)) == 1234
        assert backend_of("openai:m")[0].window(ModelOptions(context_length=777)) == 777
        assert not backend_of("embedded")[0].parallel and backend_of("openai:m")[0].parallel
        with pytest.raises(UnknownName):
            backend_of("embedded:x")  # an alias is not a scheme
    finally:
        MODELS.unregister("fast")
        MODELS.unregister("bare")


def test_a_strategy_that_does_not_declare_its_facts_is_refused_by_name():
    """`needs_model` and `decides_verdicts` were read with getattr and a default: a strategy
    now declares them (as it declares needs_index), or loading it says what to add."""
    from ragteam.errors import RagteamError
    from ragteam.strategies.registry import STRATEGIES, strategy_class
    from ragteam.types import Answer

    class Vague:
        name: ClassVar[str] = "vague"
        needs_index: ClassVar[bool] = False
        roles: ClassVar[tuple[str, ...]] = ()

        def run(self, posed, ctx):
            return Answer(posed.stem, "?", self.name, [], ctx.trace)

    STRATEGIES.register("vague", Vague)
    try:
        with pytest.raises(RagteamError, match="does not declare needs_model, decides_verdicts"):
            strategy_class("vague")
    finally:
        STRATEGIES.unregister("vague")
    assert strategy_class("read").needs_model is False and strategy_class("oner").needs_model
