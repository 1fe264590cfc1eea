"""Smurfs on the real embedded model: HotpotQA questions with search/lookup over a real index,
and one question answered through a real MCP server's tool."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ragteam.asking.api import answer
from ragteam.retrieval import load_index

pytestmark = pytest.mark.integration
OPTIONS = {"k": 2, "max_subtasks": 2, "max_steps": 2}


def test_smurfs_answers_with_search_and_lookup(hotpot_bm25_dir, dev3, embedded_model):
    index = load_index(hotpot_bm25_dir)
    searched = 0
    for q in dev3:
        result = answer(
            q["question"], index=index, strategy="smurfs", model=embedded_model, options=OPTIONS
        )
        steps = result.trace.steps
        tools = [s for s in steps if s.kind == "tool"]
        assert tools and all(s.input["name"] in ("search", "lookup") for s in tools)
        searched += any(s.input["name"] == "search" and s.error is None for s in tools)
        llm = [s for s in steps if s.kind == "llm"]
        assert {s.role for s in llm} <= {"planner", "executor", "answer_agent", "verifier", "final"}
        assert all(s.prompt_tokens + 48 <= embedded_model.context_length for s in llm)
        assert len(llm) <= 40 and len(tools) <= 12
        retrieved = {h["id"] for s in steps if s.kind == "retrieve" for h in s.output}
        assert all(c.passage_id in retrieved for c in result.citations)
        assert any(s.meta.get("event") == "task_log" for s in steps)
    assert searched >= 1  # a tool call that ran without error, on the real model


def test_smurfs_calls_a_real_mcp_servers_tool(embedded_model):
    pytest.importorskip("mcp")
    from ragteam.tools.mcp import MCPServer

    server = f"{sys.executable} {Path(__file__).with_name('mcp_toy_server.py')}"
    with MCPServer(server, timeout=5) as mcp:
        birthplace = [t for t in mcp.tools if t.name == "archipelago.birthplace"]
        result = answer(
            "In which village was Emrik Tollan born?",
            strategy="smurfs",
            model=embedded_model,
            tools=birthplace,
            options={"planner": False, "max_steps": 2},
        )
    calls = [s for s in result.trace.steps if s.kind == "tool"]
    assert calls and calls[0].input["name"] == "archipelago.birthplace"
    assert set(calls[0].input["arguments"]) == {"person"}
    assert calls[0].error is None or "invalid arguments" not in calls[0].error
