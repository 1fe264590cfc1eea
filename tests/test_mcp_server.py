"""`ragteam mcp` driven by the official `mcp` client (`ClientSession`): over streamable HTTP on
127.0.0.1 with a scripted model (list tools, call each, progress, bad calls, resources), and over
stdio as a subprocess with the real embedded model."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

pytest.importorskip("mcp")
from conftest import serving  # noqa: E402
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from ragteam.llm import FakeModel  # noqa: E402
from ragteam.server import ServerConfig  # noqa: E402
from ragteam.server.mcp_app import build_mcp  # noqa: E402
from ragteam.server.service import Service  # noqa: E402

QUESTION = "In which village was the engineer who built the Wrenhold Lighthouse born?"


@pytest.fixture(scope="module")
def http_url(bm25_index_dir):
    service = Service(
        ServerConfig(indexes={"demo": bm25_index_dir}), FakeModel(lambda m, p: "Hevik")
    )
    with serving(build_mcp(service).streamable_http_app()) as port:
        yield f"http://127.0.0.1:{port}/mcp"


def _payload(result):
    assert not result.is_error, result.content
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        return structured.get("result", structured)
    return json.loads(result.content[0].text)


async def _session_run(url, work):
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await work(session)


def test_tools_search_passage_and_ask_over_http(http_url):
    progress = []

    async def work(session):
        from ragteam import __version__

        assert session.server_info.name == "ragteam" and session.server_info.version == __version__
        tools = sorted(t.name for t in (await session.list_tools()).tools)
        found = _payload(
            await session.call_tool("search", {"query": "Wrenhold Lighthouse", "k": 3})
        )
        opened = _payload(await session.call_tool("passage", {"passage_id": found[0]["id"]}))

        async def on_progress(done, total, message):
            progress.append((done, message))

        answered = _payload(
            await session.call_tool(
                "ask", {"question": QUESTION, "strategy": "oner"}, progress_callback=on_progress
            )
        )
        resources = [str(r.uri) for r in (await session.list_resources()).resources]
        manifest = await session.read_resource("index://demo")
        return tools, found, opened, answered, resources, manifest

    tools, found, opened, answered, resources, manifest = asyncio.run(_session_run(http_url, work))
    assert tools == ["ask", "passage", "search"]
    assert len(found) == 3 and all("score" in p and p["id"] for p in found)
    assert opened["passage_id"] == found[0]["id"] and opened["text"]
    assert "locator" in opened
    assert answered["answer"] == "Hevik" and answered["citations"]
    assert [s["kind"] for s in answered["steps"]] == ["retrieve", "llm", "support"]
    assert len(progress) >= 2  # one notification per agent step
    said = [message for _done, message in progress]  # in words, not "retrieve retriever"
    assert said[:2] == ["searched the documents", "wrote the answer"]
    assert said[2].startswith("checked each sentence")
    assert resources == ["index://demo"]
    assert json.loads(manifest.contents[0].text)["name"] == "demo"


def test_bad_calls_are_errors_not_crashes(http_url):
    async def work(session):
        missing = await session.call_tool("passage", {"passage_id": "no-such-passage"})
        wrong_type = await session.call_tool("search", {"query": "x", "k": "many"})
        no_args = await session.call_tool("ask", {})
        server_file = await session.call_tool(
            "ask", {"question": "x", "strategy": "oner", "options": {"state": "/etc/passwd"}}
        )
        too_many = await session.call_tool("search", {"query": "x", "k": 500})
        still_fine = await session.call_tool("search", {"query": "Hevik", "k": 1})
        return missing, wrong_type, no_args, server_file, too_many, still_fine

    missing, wrong_type, no_args, server_file, too_many, still_fine = asyncio.run(
        _session_run(http_url, work)
    )
    for bad in (missing, wrong_type, no_args, server_file, too_many):
        assert bad.is_error
    assert "no passage" in missing.content[0].text
    assert "cannot be set by a request" in server_file.content[0].text
    # bad arguments in one plain line each: what is wrong and what was given, no pydantic report
    assert wrong_type.content[0].text == (
        "bad arguments for `search`: k: input should be a valid integer, unable to parse "
        "string as an integer (given 'many')"
    )
    assert no_args.content[0].text == "bad arguments for `ask`: question is required"
    assert "pydantic" not in wrong_type.content[0].text + no_args.content[0].text
    assert len(_payload(still_fine)) == 1


def test_the_ask_schema_names_the_choices_and_errors_name_no_server_path(http_url, bm25_index_dir):
    async def work(session):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        empty = await session.call_tool("ask", {"question": "  "})
        huge = await session.call_tool("search", {"query": "x" * 1_000_000, "k": 1})
        withheld = await session.call_tool(
            "ask", {"question": QUESTION, "strategy": "oner", "abstain": True, "index": "demo"}
        )
        return tools["ask"].input_schema, empty, huge, withheld

    schema, empty, huge, withheld = asyncio.run(_session_run(http_url, work))
    props = schema["properties"]
    strategies = props["strategy"]["enum"]
    assert "smart" in strategies and "oner" in strategies
    assert "adaptive" not in strategies  # no router is trained for this server
    assert props["strategy"]["default"] == "read"
    # every registered layer but the checker (it needs a file of the caller's machine)
    assert "demo" in json.dumps(props["index"]) and props["support"]["enum"] == [
        "lexical",
        "llm",
        "reader",
        "off",
    ]
    assert empty.is_error and "ragteam ask" not in empty.content[0].text
    assert huge.is_error and "1,000,000 characters" in huge.content[0].text
    level = _payload(withheld)["grounding"]["level"]
    assert level in ("supported", "partly_supported", "not_supported")


@pytest.mark.integration
def test_stdio_with_the_embedded_model(bm25_index_dir):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ragteam", "mcp", "--index", f"demo={bm25_index_dir}", "--n-ctx", "2048"],
    )

    async def work():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = sorted(t.name for t in (await session.list_tools()).tools)
            answered = await session.call_tool(
                "ask", {"question": QUESTION, "strategy": "oner"}, read_timeout_seconds=300
            )
            return tools, answered

    tools, answered = asyncio.run(work())
    assert tools == ["ask", "passage", "search"]
    data = _payload(answered)
    assert data["answer"].strip() and data["cost"]["llm_calls"] >= 1


def test_a_cancelled_ask_stops_its_work_and_holds_its_slot_until_then(bm25_index_dir):
    """N3: a call the client cancels stops at its next step or token, and the queue counts
    its slot as taken until the work has stopped (before: it ran to the end, slot freed)."""
    import time

    calls, free_during_calls = [], []

    def slow(messages, params):
        free_during_calls.append(service.gate._free)  # the slot is held while work runs
        calls.append(1)
        time.sleep(0.3)
        return {"analysis": "a", "steps": ["a?", "b?", "c?", "d?"]}  # marag: 15 calls

    service = Service(ServerConfig(indexes={"demo": bm25_index_dir}), FakeModel(slow))

    async def work(session):
        asking = session.call_tool("ask", {"question": QUESTION, "strategy": "marag"})
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(asking, timeout=1.0)  # the client cancels the call
        await asyncio.sleep(1.5)
        settled = len(calls)
        await asyncio.sleep(1.5)
        return settled

    with serving(build_mcp(service).streamable_http_app()) as port:
        settled = asyncio.run(_session_run(f"http://127.0.0.1:{port}/mcp", work))
    assert 0 < settled == len(calls) <= 6, calls  # stopped (before: all 15 calls)
    assert set(free_during_calls) == {0}
    assert service.gate._free == service.config.concurrency  # freed once it stopped


def test_mcp_over_http_asks_the_key_and_its_sessions_expire_and_are_bounded(bm25_index_dir):
    """N12: the server's key on every request (the event stream is a GET), sessions that end
    when idle (before: never, +24 MB per 600) and a bound on how many are open at once."""
    import time

    import httpx
    from mcp.types import LATEST_PROTOCOL_VERSION

    from ragteam.server.mcp_app import mcp_http_app

    config = ServerConfig(indexes={"demo": bm25_index_dir}, api_key="s3cret")
    app = mcp_http_app(Service(config, FakeModel(lambda m, p: "Hevik")), idle_s=1.0, max_sessions=2)
    keyed = {"Authorization": "Bearer s3cret", "Accept": "application/json, text/event-stream"}
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LATEST_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
    with serving(app) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        assert httpx.post(url, json=hello, timeout=10).status_code == 401
        assert httpx.get(url, timeout=10).status_code == 401
        opened = [httpx.post(url, json=hello, headers=keyed, timeout=10) for _ in range(3)]
        assert [r.status_code for r in opened] == [200, 200, 503]
        first = opened[0].headers["mcp-session-id"]
        time.sleep(2.5)  # idle past the limit: both sessions end
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
        gone = httpx.post(url, json=listing, headers={**keyed, "mcp-session-id": first}, timeout=10)
        assert gone.status_code == 404
        assert httpx.post(url, json=hello, headers=keyed, timeout=10).status_code == 200
