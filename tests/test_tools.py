"""Tools: schemas from typed functions, safe calls (validation, errors, timeouts, bounded
output), the built-in tools over a real index, and a real MCP server over stdio."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Literal

import pytest
from typer.testing import CliRunner

from ragteam.cli import app
from ragteam.errors import InputError
from ragteam.retrieval import load_index
from ragteam.tools import ToolBox, calculator, import_tool, index_tools, make_tool, tool
from ragteam.trace import Trace
from ragteam.types import Retrieved

TOY_SERVER = f"{sys.executable} {Path(__file__).with_name('mcp_toy_server.py')}"


def weather(city: str, days: int = 1, unit: Literal["C", "F"] = "C", note: str | None = None):
    """The weather forecast for a city.

    Args:
        city: the city's name
        days: how many days ahead
    """
    return f"{city}: sunny for {days} days ({unit})"


def test_the_schema_comes_from_the_signature_and_the_docstring():
    made = make_tool(weather)
    assert made.name == "weather"
    assert made.description == "The weather forecast for a city."
    props = made.parameters["properties"]
    assert props["city"] == {"type": "string", "description": "the city's name"}
    assert props["days"] == {"type": "integer", "description": "how many days ahead", "default": 1}
    assert props["unit"] == {"enum": ["C", "F"], "default": "C"}
    assert props["note"] == {"type": "string"}
    assert made.parameters["required"] == ["city"]
    assert "weather(city: string, days: integer" in made.describe()


def test_functions_that_cannot_be_described_are_refused():
    def undocumented(x: int) -> int:
        return x

    def untyped(x):
        """Has no types."""

    def variadic(*xs: int):
        """Takes anything."""

    with pytest.raises(InputError, match="no docstring"):
        make_tool(undocumented)
    with pytest.raises(InputError, match="no type annotation"):
        make_tool(untyped)
    with pytest.raises(InputError, match=r"\*args"):
        make_tool(variadic)
    with pytest.raises(InputError, match="tool name"):
        make_tool(weather, name="bad name/with path")


def test_the_decorator_names_and_times_out():
    @tool(name="nap", timeout=0.2)
    def sleepy(seconds: float) -> str:
        """Sleep, then answer."""
        time.sleep(seconds)
        return "awake"

    trace = Trace()
    box = ToolBox([sleepy])
    started = time.perf_counter()
    result = box.call("nap", {"seconds": 5}, trace)
    assert time.perf_counter() - started < 2
    assert result.error and "timed out" in result.error and not result.ok
    assert box.call("nap", {"seconds": 0}, trace).text == "awake"
    step = trace.steps[0]
    assert (step.kind, step.role, step.error) == ("tool", "nap", result.error)
    assert step.input == {"name": "nap", "arguments": {"seconds": 5}}


def test_bad_calls_are_observations_not_crashes():
    def explode(x: int) -> str:
        """Always fails."""
        raise RuntimeError("kaboom")

    def chatty(n: int) -> str:
        """Says a lot."""
        return "x" * n

    box = ToolBox([explode, chatty], max_chars=100)
    trace = Trace()
    assert "kaboom" in box.call("explode", {"x": 1}, trace).error
    assert "invalid arguments" in box.call("explode", {"x": "one"}, trace).error
    assert "required" in box.call("explode", {}, trace).error
    assert "no tool named" in box.call("os.system", {"command": "ls"}, trace).error
    long = box.call("chatty", {"n": 5000}, trace)
    assert long.ok and len(long.text) < 200 and "100 of 5,000 characters shown" in long.text
    assert [s.kind for s in trace.steps] == ["tool"] * 5
    with pytest.raises(InputError, match="two tools are named"):
        ToolBox([explode, explode])


def test_the_calculator_does_arithmetic_and_nothing_else():
    assert calculator("(1871 - 1784) / 3") == "29"
    assert calculator("2 ** 10 + sqrt(16) - abs(-1)") == "1027"
    assert calculator("round(10 / 4, 1)") == "2.5"
    for bad in ("__import__('os').system('ls')", "x + 1", "(1).real", "open('f')", "[1, 2]"):
        with pytest.raises(ValueError, match="only arithmetic"):
            calculator(bad)
    with pytest.raises(ValueError, match="exponent"):
        calculator("9 ** 9999999")
    with pytest.raises(ValueError, match="not an arithmetic"):
        calculator("1 +")
    box = ToolBox([calculator])
    assert "division by zero" in box.call("calculator", {"expression": "1/0"}, Trace()).error


def test_import_tool_takes_module_colon_function():
    made = import_tool("ragteam.tools.builtin:today")
    assert made.name == "today"
    for spec, message in [
        ("ragteam.tools.builtin", "module:function"),
        ("no_such_module_xyz:f", "cannot import"),
        ("ragteam.tools.builtin:nothing", "has no attribute"),
    ]:
        with pytest.raises(InputError, match=message):
            import_tool(spec)


def test_search_and_lookup_over_a_real_index(bm25_index_dir):
    trace = Trace()
    box = ToolBox(index_tools(load_index(bm25_index_dir), trace, Retrieved(), default_k=2))
    lookup = box.get("lookup")
    assert not lookup.ready()  # nothing to look into before a search
    found = box.call("search", {"query": "Wrenhold Lighthouse engineer"}, trace)
    assert found.ok and len(found.passages) == 2
    assert [s.kind for s in trace.steps] == ["retrieve", "tool"]
    assert lookup.ready()
    first = found.passages[0]
    assert f"[{first.id}]" in found.text
    by_id = box.call("lookup", {"passage_id": first.id, "keyword": "built"}, trace)
    by_title = box.call("lookup", {"passage_id": first.title, "keyword": "built"}, trace)
    assert by_id.ok and by_id.text == by_title.text and "built" in by_id.text.lower()
    missing = box.call("lookup", {"passage_id": "nope-99", "keyword": "x"}, trace)
    assert "no passage has the id" in missing.error


def test_tools_of_a_real_mcp_server_over_stdio():
    pytest.importorskip("mcp")
    from ragteam.tools.mcp import MCPServer

    with MCPServer(TOY_SERVER, timeout=1.0) as server:
        names = [t.name for t in server.tools]
        assert names == ["archipelago.birthplace", "archipelago.broken", "archipelago.slow"]
        box, trace = ToolBox(server.tools), Trace()
        found = box.call("archipelago.birthplace", {"person": "Emrik Tollan"}, trace)
        assert (found.text, found.error) == ("Hevik", None)
        assert "invalid arguments" in box.call("archipelago.birthplace", {}, trace).error
        assert box.call("archipelago.broken", {"reason": "x"}, trace).error
        assert "timed out" in box.call("archipelago.slow", {"seconds": 10}, trace).error
        # the session survives a failed and a timed-out call
        again = box.call("archipelago.birthplace", {"person": "Piet Anvers"}, trace)
        assert again.text == "Dunmere"
    assert server._session is None


def test_an_mcp_server_that_does_not_start_is_a_clear_error():
    pytest.importorskip("mcp")
    from ragteam.tools.mcp import MCPError, MCPServer

    with pytest.raises(MCPError, match="did not start"):
        MCPServer("no-such-command-for-ragteam-tests")
    with pytest.raises(InputError, match="needs a command"):
        MCPServer("   ")


def test_the_tools_command_lists_builtin_and_mcp_tools():
    pytest.importorskip("mcp")
    result = CliRunner().invoke(app, ["tools", "--mcp", TOY_SERVER])
    assert result.exit_code == 0, result.output
    for name in ("calculator", "today", "archipelago.birthplace", "search, lookup"):
        assert name in result.output
    bad = CliRunner().invoke(app, ["tools", "--tools", "nonsense"])
    assert bad.exit_code != 0 and "module:function" in bad.output


def test_lookups_schema_narrows_to_the_ids_search_showed(bm25_index_dir):
    trace = Trace()
    box = ToolBox(index_tools(load_index(bm25_index_dir), trace, Retrieved(), default_k=2))
    lookup = box.get("lookup")
    assert lookup.schema_now()["properties"]["passage_id"] == {"type": "string"}
    found = box.call("search", {"query": "Wrenhold Lighthouse"}, trace)
    narrowed = lookup.schema_now()["properties"]["passage_id"]
    assert narrowed["enum"] == [p.id for p in found.passages]
    assert lookup.parameters["properties"]["passage_id"] == {
        "type": "string",
        "description": "the id of a passage, as search shows it in [brackets]",
    }  # the declared schema is unchanged
