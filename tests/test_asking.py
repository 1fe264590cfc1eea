"""The answer options declared once (`ragteam.asking.AskRequest`): every field reaches each
surface that offers it (the CLI's `ask` and `eval`, the Python API and `evaluate`, the page's
body, the chat extension, MCP's `ask`), and reaches the answer from there; a bad value is one
clear error wherever it is given."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest
import typer
from typer.testing import CliRunner

from ragteam import answer, evaluate
from ragteam.asking import AskRequest, ask_fields
from ragteam.cli import app
from ragteam.errors import InputError
from ragteam.llm import FakeModel

runner = CliRunner()
QUESTION = "Who built the Wrenhold Lighthouse?"


def _flags(command: str) -> set[str]:
    clicked = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    return {p.name for p in clicked.params}


def test_every_field_is_a_flag_of_ask_and_the_run_wide_ones_of_eval():
    names = {f.name for f in ask_fields()}
    assert names >= {"strategy", "options", "choices", "claim", "support", "verdicts"}
    assert names <= _flags("ask")
    run_wide = {f.name for f in ask_fields("eval")}
    assert run_wide <= _flags("eval") and "claim" not in run_wide and "choices" not in run_wide
    assert {"support", "abstain", "verdicts", "instructions", "temperature"} <= run_wide


def test_every_served_field_is_in_the_bodies_and_in_the_mcp_schema(bm25_index_dir):
    pytest.importorskip("fastapi")
    pytest.importorskip("mcp")
    from ragteam.server import ServerConfig
    from ragteam.server.asking import Asked, AskOptions
    from ragteam.server.mcp_app import build_mcp
    from ragteam.server.service import Service

    served = {f.name for f in ask_fields("served")}
    assert "checker" not in served  # a file of the caller's machine
    assert served <= set(Asked.model_fields)
    assert {f.name for f in ask_fields("chat")} == set(AskOptions.model_fields)
    service = Service(ServerConfig(indexes={"demo": bm25_index_dir}), FakeModel(["x"]))
    tools = {t.name: t for t in asyncio.run(build_mcp(service).list_tools())}
    props = tools["ask"].input_schema["properties"]
    assert served <= set(props) and "ctx" not in props
    assert props["verdicts"]["enum"] == ["fitted", "own"]
    assert props["temperature"]["description"].startswith("sampling temperature")


def test_the_asker_s_instructions_and_temperature_reach_the_writing_role(bm25_index_dir):
    model = FakeModel(lambda messages, params: "So the answer is: Emrik Tollan")
    result = answer(
        QUESTION,
        index=bm25_index_dir,
        model=model,
        strategy="oner",
        instructions="Answer in one line.",
        temperature=0.5,
        support="lexical",
    )
    assert "Emrik Tollan" in result.text and "instructions" in result.applied
    assert any("Answer in one line." in m["content"] for m in model.calls[-1]["messages"])
    assert model.calls[-1]["temperature"] == 0.5
    # the same through a request object, a keyword over it
    again = answer(
        QUESTION,
        AskRequest(strategy="oner", support="lexical", temperature=0.5),
        index=bm25_index_dir,
        model=model,
        temperature=0.0,
    )
    assert again.text == result.text and model.calls[-1]["temperature"] == 0.0


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"support": "nli"}, "unknown support layer 'nli'"),
        ({"verdicts": "mine"}, "unknown verdicts 'mine'"),
        ({"temperature": 3.0}, "temperature must be a number from 0 to 2"),
        ({"choices": {"A": "Oslo"}}, "at least two choices"),
        ({"strategy": " "}, "name a strategy"),
        ({"colour": "red"}, "unknown answer option colour: use abstain, checker"),
    ],
)
def test_a_bad_option_is_one_clear_error_before_any_work(given, said, bm25_index_dir):
    untouched = FakeModel([])
    with pytest.raises(InputError, match=said):
        answer(QUESTION, index=bm25_index_dir, model=untouched, **given)
    assert untouched.calls == []


def test_the_cli_reads_its_flags_into_one_request(bm25_index_dir):
    bad = runner.invoke(app, ["ask", QUESTION, "--index", str(bm25_index_dir), "--support", "nli"])
    assert bad.exit_code != 0 and "unknown support layer 'nli'" in bad.output
    hot = runner.invoke(app, ["ask", QUESTION, "--temperature", "3"])
    assert hot.exit_code != 0 and "temperature" in hot.output
    one = runner.invoke(app, ["ask", QUESTION, "--choice", "A=Oslo"])
    assert one.exit_code != 0 and "at least two choices" in one.output
    read = runner.invoke(app, ["ask", QUESTION, "--index", str(bm25_index_dir), "--json"])
    assert read.exit_code == 0, read.output
    assert json.loads(read.output)["strategy"] == "read"


def test_eval_records_its_run_wide_options_and_refuses_a_question_s_own(tmp_path, bm25_index_dir):
    data = tmp_path / "q.jsonl"
    row = {"id": "q1", "question": QUESTION, "answers": ["Emrik Tollan"]}
    data.write_text(json.dumps(row) + "\n")
    model = FakeModel(lambda messages, params: "So the answer is: Emrik Tollan")
    out = tmp_path / "run"
    rows = evaluate(data, out, strategies="oner", index=bm25_index_dir, model=model,
                    support="lexical", abstain=True)  # fmt: skip
    assert rows and rows[0].grounding == "supported"
    config = json.loads((out / "config.json").read_text())
    assert config["asking"] == {"support": "lexical", "abstain": True}
    with pytest.raises(InputError, match="different configuration"):  # not resumed as another
        evaluate(data, out, strategies="oner", index=bm25_index_dir, model=model)
    with pytest.raises(InputError, match="claim: each question or strategy sets its own"):
        evaluate(data, tmp_path / "r2", strategies="oner", model=model, claim=True)


def test_a_request_records_only_what_differs_from_the_defaults():
    assert AskRequest().given() == {}
    assert AskRequest(abstain=True, options={"k": 3}).given() == {
        "abstain": True,
        "options": {"k": 3},
    }
    assert dataclasses.replace(AskRequest(), verdicts="own").support_settings.layer == "reader"
