"""Defects found by trying ragteam as a new user would; each test failed before its fix."""

from __future__ import annotations

import json

import httpx
import pytest
from typer.testing import CliRunner

from ragteam import __version__
from ragteam.asking.api import answer
from ragteam.asking.where import Loaded
from ragteam.cli import app
from ragteam.errors import IndexUnusable, InputError, ModelError
from ragteam.eval.datasets import load_dataset
from ragteam.eval.rundir import RunDir
from ragteam.eval.runner import EvalPlan, run_eval
from ragteam.llm import FakeModel, Request
from ragteam.llm.openai_compat import OpenAICompatModel
from ragteam.retrieval import build_index, load_index
from ragteam.strategies import make_strategy

runner = CliRunner()


def test_version_flag():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"k": "abc"}, "expected an integer"),
        ({"k": -1}, "between 1 and 100"),
        ({"k": 100000}, "between 1 and 100"),
        ({"k": 0}, "between 1 and 100"),
        ({"k": 2.5}, "expected an integer"),
    ],
)
def test_option_values_are_type_and_range_checked(options, message):
    with pytest.raises(InputError, match=message):
        make_strategy("oner", options)


def test_boolean_options_parse_no_as_false_and_refuse_nonsense():
    assert make_strategy("smart", {"locator": "no"}).locator is False
    assert make_strategy("smart", {"locator": "true"}).locator is True
    with pytest.raises(InputError, match="expected true or false"):
        make_strategy("smart", {"locator": "maybe"})
    assert make_strategy("oner", {"k": "7"}).k == 7


def test_a_misspelled_role_is_an_error_listing_the_roles(bm25_index_dir):
    with pytest.raises(InputError, match=r"unknown role planer.*planner"):
        answer(
            "Who?",
            index=bm25_index_dir,
            strategy="marag",
            model=FakeModel(["x"]),
            role_models={"planer": FakeModel(["x"])},
        )


def test_failed_rows_are_retried_on_resume(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(
        "\n".join(
            json.dumps({"id": str(i), "question": f"Q{i}?", "answers": ["Paris"]}) for i in range(3)
        )
    )
    examples = load_dataset(data)
    plan = EvalPlan(examples, {"nor": {}}, data)

    def outage(messages, params):
        if "Q1?" in messages[-1]["content"]:
            raise ModelError("HTTP 500 from the server")
        return "Paris"

    run = RunDir(tmp_path / "run")
    first = run_eval(plan, run, Loaded(FakeModel(outage), None))
    assert sum(1 for r in first if r.error) == 1
    second = run_eval(plan, run, Loaded(FakeModel(lambda m, p: "Paris"), None))
    assert [r.id for r in second] == ["1"] and second[0].error is None
    rows = run.results()
    assert len(rows) == 3 and all(r["metrics"]["f1"] == 1.0 for r in rows)
    assert run_eval(plan, run, Loaded(FakeModel(["never"]), None)) == []


def test_bm25_stemmer_option_reaches_the_index(tmp_path):
    from ragteam.commands.demo import demo_corpus_path

    out = tmp_path / "idx"
    result = runner.invoke(
        app,
        [
            "index",
            "build",
            str(demo_corpus_path()),
            "--out",
            str(out),
            "--retriever",
            "bm25",
            "--bm25-stemmer",
            "none",
        ],
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["params"]["bm25"]["stemmer"] == "none"
    again = runner.invoke(app, ["index", "build", str(demo_corpus_path()), "--out", str(out)])
    assert "replaced the index" in again.output


@pytest.mark.parametrize(
    "argv",
    [
        ["ask", "Q?", "--n-ctx", "0"],
        ["ask", "Q?", "--threads", "-2"],
        ["index", "build", "x", "--out", "y", "--passage-words", "-5"],
        ["eval", "--data", "d", "--out", "o", "--limit", "-3"],
    ],
)
def test_nonsense_numbers_are_refused_at_the_edge(argv):
    result = runner.invoke(app, argv)
    assert result.exit_code == 2 and "Invalid value" in result.output


def test_same_size_corruption_of_an_index_file_is_caught(tmp_path):
    from ragteam.commands.demo import demo_corpus_path

    out = tmp_path / "idx"
    build_index(demo_corpus_path(), out, retriever="bm25")
    victim = sorted(p for p in out.rglob("*") if p.is_file() and p.suffix != ".json")[0]
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    with pytest.raises(IndexUnusable, match="changed since the build"):
        load_index(out)


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("files", ["not", "a", "mapping"], "files"),
        ("params", {"bm25": "x"}, "params.bm25"),  # D9r: was a traceback in index info and ask
        ("source", {"path": 5}, "path"),
        ("passage_count", "48", "passage_count"),
        ("params", {"bm25": {"stemmer": 5}}, "params.bm25"),  # read by the bm25 kind
    ],
)
def test_a_wrong_shaped_manifest_names_the_field(tmp_path, field, value, named):
    """Even a sealed manifest (written by a faulty build) is read field by field."""
    from ragteam.commands.demo import demo_corpus_path
    from ragteam.retrieval.manifest import seal

    out = tmp_path / "idx"
    build_index(demo_corpus_path(), out, retriever="bm25")
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps(seal({**manifest, field: value})))
    with pytest.raises(IndexUnusable, match=f"wrong shape \\({named}"):
        load_index(out)
    result = runner.invoke(app, ["index", "info", str(out)])
    assert result.exit_code == 2 and "wrong shape" in result.output, result.output
    assert "Traceback" not in result.output


def test_a_killed_build_leaves_no_staging_folder_behind(tmp_path):
    from ragteam.commands.demo import demo_corpus_path

    stale = tmp_path / ".idx.building-999999999"
    stale.mkdir()
    build_index(demo_corpus_path(), tmp_path / "idx", retriever="bm25")
    assert not stale.exists()


def test_passage_id_collisions_are_detected(tmp_path):
    corpus = tmp_path / "c.jsonl"
    long_text = " ".join(f"w{i}" for i in range(400))
    corpus.write_text(
        json.dumps({"id": "a", "title": "A", "text": long_text})
        + "\n"
        + json.dumps({"id": "a#0", "title": "B", "text": "short"})
        + "\n"
    )
    with pytest.raises(InputError, match="passage id 'a#0' comes from document 'a' of c.jsonl"):
        build_index(corpus, tmp_path / "ix", retriever="bm25")


def test_non_utf8_input_is_a_message_not_a_traceback(tmp_path, bm25_index_dir):
    data = tmp_path / "bad.jsonl"
    data.write_bytes(b'{"id": "1", "question": "caf\xe9?", "answers": ["x"]}\n')
    with pytest.raises(InputError, match=r"bad.jsonl:1: not UTF-8"):
        load_dataset(data)
    with pytest.raises(InputError, match="not UTF-8"):
        answer("caf\udce9?", index=bm25_index_dir, model=FakeModel(["x"]))
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "x.txt").write_bytes(b"\x00\x01\x02binary")
    with pytest.raises(InputError, match="x.txt: failed .binary"):
        build_index(folder, tmp_path / "ix", retriever="bm25")


def test_server_urls_and_bodies_that_are_not_json_are_clear_errors():
    with pytest.raises(ModelError, match="must start with http"):
        OpenAICompatModel("m", base_url="127.0.0.1:8000/v1")
    transport = httpx.MockTransport(lambda request: httpx.Response(200, text="<html>hi</html>"))
    model = OpenAICompatModel("m", base_url="http://127.0.0.1:9/v1", transport=transport)
    with pytest.raises(ModelError, match="not JSON"):
        model.complete(Request([{"role": "user", "content": "hi"}]))


def test_retries_are_reported_and_bounded(caplog):
    calls = []

    def flaky(request):
        calls.append(request)
        return httpx.Response(503, text="busy")

    model = OpenAICompatModel(
        "m",
        base_url="http://127.0.0.1:9/v1",
        transport=httpx.MockTransport(flaky),
        max_retries=2,
        backoff=0.01,
    )
    with caplog.at_level("WARNING"), pytest.raises(ModelError, match="after 3 attempts"):
        model.complete(Request([{"role": "user", "content": "hi"}]))
    assert len(calls) == 3 and "retry 1 of 2" in caplog.text


def test_report_refuses_an_unknown_baseline_and_writes_into_new_folders(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "Q?", "answers": ["a"]}) + "\n")
    run_eval(
        EvalPlan(load_dataset(data), {"nor": {}}, data),
        RunDir(tmp_path / "run"),
        Loaded(FakeModel(["a"]), None),
    )
    bad = runner.invoke(app, ["report", str(tmp_path / "run"), "--baseline", "nope"])
    assert bad.exit_code == 2 and "--baseline nope" in bad.output
    target = tmp_path / "new" / "folder" / "report.md"
    ok = runner.invoke(app, ["report", str(tmp_path / "run"), "--markdown", str(target)])
    assert ok.exit_code == 0 and target.is_file()


def test_budgets_follow_the_model_that_plays_the_role(bm25_index_dir):
    from ragteam.llm.base import estimate_tokens

    small = FakeModel(lambda m, p: "Hevik", context_length=400)
    big = FakeModel(lambda m, p: "unused", context_length=100_000)
    answer(
        "Where was the engineer born? " * 20,
        index=bm25_index_dir,
        strategy="oner",
        model=big,
        options={"k": 8},
        role_models={"answerer": small},
    )
    [call] = small.calls
    prompt = sum(estimate_tokens(m["content"]) for m in call["messages"])
    assert prompt + call["max_tokens"] <= 400 and not big.calls


def test_an_answer_whose_every_call_failed_to_parse_is_flagged():
    import typer

    from ragteam.cli import _warn_unparsed
    from ragteam.trace import Step, Trace
    from ragteam.types import Answer, Retrieved

    def answered(trace: Trace) -> Answer:  # what `run_posed` hands on: the trace's tally
        return Answer("Q?", "", "smart", [], trace, work=Retrieved().work(trace.tally))

    trace = Trace()
    trace.add(Step("llm", "generator", [], "garbage", parse_failures=2, error="invalid JSON"))
    _warn_unparsed(answered(trace), strict=False)  # a warning only
    with pytest.raises(typer.Exit) as exited:
        _warn_unparsed(answered(trace), strict=True)
    assert exited.value.exit_code == 3
    trace.add(Step("llm", "generator", [], "fine"))
    _warn_unparsed(answered(trace), strict=True)  # one call parsed: no exit


def test_unknown_router_choices_are_errors_not_defaults():
    from ragteam.router.rewards import Reward
    from ragteam.router.simulate import Setup

    with pytest.raises(InputError, match="unknown reward 'papr'"):
        Reward("papr")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="unknown cost"):
        Reward(cost="ms")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="unknown tie-break"):
        Setup(tie_break="random")  # type: ignore[arg-type]
    with pytest.raises(ModelError, match="unknown schema style"):
        OpenAICompatModel("m", schema_style="xml")  # type: ignore[arg-type]


def test_an_atomic_write_that_fails_leaves_the_old_file_and_no_litter(tmp_path):
    from ragteam.common import atomic

    target = tmp_path / "state.json"
    atomic.write_json(target, {"a": 1})

    def rows():
        yield "first line\n"
        raise RuntimeError("killed mid-write")

    with pytest.raises(RuntimeError):
        atomic.write_lines(target, rows())
    assert json.loads(target.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]
