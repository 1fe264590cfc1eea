"""The evaluation runner and report on a scripted model and a real BM25 index on disk."""

import dataclasses
import json

import pytest
from typer.testing import CliRunner

from ragteam.asking import AskRequest
from ragteam.asking.where import Loaded
from ragteam.cli import app
from ragteam.errors import InputError
from ragteam.eval.datasets import read_examples
from ragteam.eval.report import (
    load_runs,
    paired,
    plot,
    render_markdown,
    resolve_baseline,
    role_failures,
)
from ragteam.eval.row import EvalRow
from ragteam.eval.rundir import RunDir
from ragteam.eval.runner import EvalPlan, run_eval
from ragteam.llm import FakeModel
from ragteam.retrieval import load_index

QUESTIONS = [
    {
        "id": "q1",
        "question": "Who built the Wrenhold Lighthouse?",
        "answers": ["Emrik Tollan"],
        "supporting_ids": ["halvard-04"],
        "type": "bridge",
    },
    {
        "id": "q2",
        "question": "Who designed the Tarrin Bridge?",
        "answers": ["Ilse Marrow"],
        "supporting_ids": ["halvard-12"],
        "type": "bridge",
    },
    {
        "id": "q3",
        "question": "Who keeps the Korr Beacon?",
        "answers": ["Mara Lind"],
        "supporting_ids": ["halvard-21"],
        "type": "comparison",
    },
    {
        "id": "q4",
        "question": "Where was Jonas Vell born?",
        "answers": ["Hevik"],
        "supporting_ids": ["halvard-33"],
        "type": "comparison",
    },
]
ANSWERS = {"Wrenhold": "Emrik Tollan", "Tarrin": "Ilse", "Korr": "nobody", "Vell": "Hevik"}


def oracle(messages, params):
    asked = messages[-1]["content"].rsplit("Question:", 1)[-1]
    return next(v for k, v in ANSWERS.items() if k in asked)


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    return path


def plan_for(data, **kw):
    return EvalPlan(read_examples(data), {"oner": {"k": 3}, "nor": {}}, data, **kw)


def stable(rows):
    keep = ("id", "strategy", "prediction", "metrics", "citations", "error")
    return sorted(json.dumps({k: r[k] for k in keep}, sort_keys=True) for r in rows)


def test_scores_and_lines(bm25_index_dir, data, tmp_path):
    run = RunDir(tmp_path / "run")
    rows = run_eval(plan_for(data), run, Loaded(FakeModel(oracle), load_index(bm25_index_dir)))
    assert len(rows) == 8 and len(run.results()) == 8
    by = {(r.id, r.strategy): r for r in rows}
    assert by[("q1", "oner")].metrics["em"] == 1.0
    assert by[("q2", "oner")].metrics["f1"] == pytest.approx(2 / 3)
    assert by[("q1", "oner")].metrics["retrieval_all"] == 1.0
    assert by[("q1", "nor")].metrics["retrieval_all"] == 0.0
    assert by[("q1", "oner")].trace["totals"]["llm_calls"] == 1
    config = run.config()
    assert config["strategies"] == {"oner": {"k": 3}, "nor": {}}
    assert config["index"]["corpus_checksum"] and config["model"]["identity"] == "fake"


def test_interrupted_run_resumes_to_the_same_file(bm25_index_dir, data, tmp_path):
    index = load_index(bm25_index_dir)
    full = run_eval(plan_for(data), RunDir(tmp_path / "full"), Loaded(FakeModel(oracle), index))
    calls = {"n": 0}

    def breaks_on_fourth(messages, params):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return oracle(messages, params)

    run = RunDir(tmp_path / "cut")
    with pytest.raises(KeyboardInterrupt):
        run_eval(plan_for(data), run, Loaded(FakeModel(breaks_on_fourth), index))
    assert len(run.results()) == 3
    with run.results_path.open("a") as handle:  # a line cut mid-write by the interruption
        handle.write('{"id": "q3", "strat')
    resumed = run_eval(plan_for(data), run, Loaded(FakeModel(oracle), index))
    assert len(resumed) == 5
    assert stable(run.results()) == stable([r.to_dict() for r in full])
    assert run_eval(plan_for(data), run, Loaded(FakeModel([]), index)) == []  # nothing left to do


def test_a_changed_configuration_is_refused(bm25_index_dir, data, tmp_path):
    index = load_index(bm25_index_dir)
    run_eval(plan_for(data), RunDir(tmp_path / "run"), Loaded(FakeModel(oracle), index))
    other = EvalPlan(read_examples(data), {"oner": {"k": 5}, "nor": {}}, data)
    with pytest.raises(InputError, match=r"different configuration.*oner\.k: 3 -> 5"):
        run_eval(other, RunDir(tmp_path / "run"), Loaded(FakeModel(oracle), index))
    with pytest.raises(InputError, match="model.identity"):
        run_eval(
            plan_for(data), RunDir(tmp_path / "run"), Loaded(FakeModel(oracle, identity="x"), index)
        )
    with pytest.raises(InputError, match="verdicts: 'fitted' -> 'own'"):  # who decided the claims
        run_eval(
            plan_for(data, asking=AskRequest(verdicts="own")),
            RunDir(tmp_path / "run"),
            Loaded(FakeModel(oracle), index),
        )


def test_failures_are_recorded_not_raised(bm25_index_dir, data, tmp_path):
    from ragteam.errors import ModelError

    def down(messages, params):
        raise ModelError("server went away")

    rows = run_eval(
        plan_for(data), RunDir(tmp_path / "r"), Loaded(FakeModel(down), load_index(bm25_index_dir))
    )
    assert all("server went away" in r.error and r.metrics["f1"] == 0.0 for r in rows)


def test_malformed_lines_name_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "question": "q?", "answers": ["x"]}\n{"id": "b", "question": \n')
    with pytest.raises(InputError, match=r"bad\.jsonl:2"):
        read_examples(path)
    path.write_text('{"id": "a", "question": "q?", "answers": []}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:1.*answers"):
        read_examples(path)
    path.write_text('{"id": "a", "question": "", "answers": ["x"]}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:1.*question"):
        read_examples(path)


def test_report_tables_pairs_and_plot(bm25_index_dir, data, tmp_path):
    run = RunDir(tmp_path / "run")
    run_eval(plan_for(data), run, Loaded(FakeModel(oracle), load_index(bm25_index_dir)))
    table = load_runs([run.path])
    text = render_markdown(table)
    assert "| oner | 4 |" in text and "| nor | 4 |" in text
    assert "F1 bridge (n)" in text and "F1 comparison (n)" in text
    assert "Paired differences against `oner`" in text
    assert "| nor | retrieval recall | 4 |" in text
    p = paired(table["nor"], table["oner"])
    assert p["n"] == 4 and p["wins_a"] + p["wins_b"] + p["ties"] == 4 and p["mean_diff"] == 0.0
    png = plot(table, tmp_path / "plot.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_eval_and_report_commands(bm25_index_dir, data, tmp_path, monkeypatch):
    monkeypatch.setattr("ragteam.llm.load_model", lambda spec, opts=None: FakeModel(oracle))
    runner = CliRunner()
    args = [
        "eval",
        "--data",
        str(data),
        "--index",
        str(bm25_index_dir),
        "-s",
        "oner,nor",
        "--out",
        str(tmp_path / "run"),
        "--opt",
        "oner.k=2",
        "--limit",
        "3",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "6 new results" in result.output
    assert runner.invoke(app, args).output.count("0 new results") == 1
    report = runner.invoke(
        app,
        [
            "report",
            str(tmp_path / "run"),
            "--plot",
            str(tmp_path / "p.png"),
            "--markdown",
            str(tmp_path / "r.md"),
        ],
    )
    assert report.exit_code == 0, report.output
    assert "| oner | 3 |" in (tmp_path / "r.md").read_text()
    bad = runner.invoke(app, [*args[:-4], "--opt", "ircot.k=2"])
    assert bad.exit_code == 2 and "not among --strategy" in bad.output


def test_parallel_backends_get_several_workers(bm25_index_dir, data, tmp_path):
    import threading
    import time

    active, peak, lock = [0], [0], threading.Lock()

    def slow(messages, params):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return oracle(messages, params)

    model = FakeModel(slow)
    model.parallel = True
    rows = run_eval(
        plan_for(data, workers=4), RunDir(tmp_path / "p"), Loaded(model, load_index(bm25_index_dir))
    )
    assert len(rows) == 8 and peak[0] > 1
    serial = FakeModel(slow)  # parallel = False: one worker whatever is asked
    peak[0] = 0
    run_eval(
        plan_for(data, workers=4),
        RunDir(tmp_path / "s"),
        Loaded(serial, load_index(bm25_index_dir)),
    )
    assert peak[0] == 1


def test_role_models_reach_the_strategies_and_the_config(bm25_index_dir, data, tmp_path):
    answerer = FakeModel(oracle, identity="answerer-model")
    plan = EvalPlan(read_examples(data), {"nor": {}}, data)
    default = FakeModel([])
    run = RunDir(tmp_path / "r")
    roles = {"answerer": answerer}
    rows = run_eval(plan, run, Loaded(default, load_index(bm25_index_dir), roles))
    assert len(rows) == 4 and len(answerer.calls) == 4 and default.calls == []
    assert run.config()["role_models"] == {"answerer": "answerer-model"}
    plain = RunDir(tmp_path / "plain")
    run_eval(
        EvalPlan(read_examples(data), {"nor": {}}, data),
        plain,
        Loaded(answerer, load_index(bm25_index_dir)),
    )
    assert "role_models" not in plain.config()


def test_report_can_keep_only_shared_questions(bm25_index_dir, data, tmp_path):
    from ragteam.eval.report import common_questions

    index = load_index(bm25_index_dir)
    run_eval(plan_for(data), RunDir(tmp_path / "a"), Loaded(FakeModel(oracle), index))
    few = EvalPlan(read_examples(data)[:2], {"ircot": {"max_steps": 1}}, data)
    run_eval(few, RunDir(tmp_path / "b"), Loaded(FakeModel(oracle), index))
    table = load_runs([tmp_path / "a", tmp_path / "b"])
    assert {label: len(rows) for label, rows in table.items()} == {"oner": 4, "nor": 4, "ircot": 2}
    shared = common_questions(table)
    assert {len(rows) for rows in shared.values()} == {2}


def test_parse_failures_are_counted_per_role_from_the_traces():
    def row(qid, steps):
        metrics = {"em": 0.0, "f1": 0.0, "match": 0.0, "retrieval_all": 0.0}
        cost = {"llm_calls": len(steps), "prompt_tokens": 1, "completion_tokens": 1}
        data = {
            "id": qid,
            "strategy": "smart",
            "metrics": metrics,
            "cost": {**cost, "parse_failures": sum(f for _, f in steps)},
            "wall_seconds": 1.0,
            "trace": {"steps": [{"kind": "llm", "role": r, "parse_failures": f} for r, f in steps]},
        }
        return EvalRow.from_dict(data, "test")

    rows = [
        row("a", [("locator", 1), ("locator", 0)]),
        row("b", [("generator", 0), ("locator", 1)]),
    ]
    assert role_failures(rows) == {"locator": (2, 3), "generator": (0, 1)}
    baseline = dataclasses.replace(rows[0], strategy="oner", trace={"steps": []})
    text = render_markdown({"smart": {r.id: r for r in rows}, "oner": {"a": baseline}})
    assert "| smart | locator | 2 | 3 | 0.67 |" in text


def test_a_baseline_is_named_by_its_strategy_when_that_is_unambiguous():
    table = {"run-a/smart": {}, "run-b/smart": {}, "run-c/oner": {}}
    assert resolve_baseline(table, "oner") == "run-c/oner"
    assert resolve_baseline(table, "run-a/smart") == "run-a/smart"
    with pytest.raises(InputError, match="names several runs"):
        resolve_baseline(table, "smart")
    with pytest.raises(InputError, match="not among"):
        resolve_baseline(table, "marag")


def test_ragteam_evaluate_is_the_library_call_behind_eval(bm25_index_dir, data, tmp_path):
    import ragteam

    out = tmp_path / "run"
    rows = ragteam.evaluate(
        data,
        out,
        strategies="oner,nor",
        index=bm25_index_dir,
        model=FakeModel(oracle),
        limit=3,
    )
    assert sorted((r.id, r.strategy) for r in rows) == sorted(
        (q, s) for q in ("q1", "q2", "q3") for s in ("oner", "nor")
    )
    assert {r.id: r.metrics["em"] for r in rows if r.strategy == "oner"}["q1"] == 1.0
    more = ragteam.evaluate(
        data, out, strategies="oner,nor", index=bm25_index_dir, model=FakeModel(oracle)
    )
    assert [(r.id, r.strategy) for r in more] in (
        [("q4", "oner"), ("q4", "nor")],
        [("q4", "nor"), ("q4", "oner")],
    )  # resumed: only the question the first call left out
    with pytest.raises(InputError, match="unknown role"):
        ragteam.evaluate(data, out, strategies="oner", role_models={"planer": "embedded"})


def test_report_averages_a_metric_over_the_rows_that_have_it():
    """PopQA-like data: only some questions mark supporting passages."""

    def row(qid, f1, recall=None):
        metrics = {"em": f1, "f1": f1, "match": f1}
        if recall is not None:
            metrics["retrieval_all"] = recall
        cost = {"llm_calls": 1, "prompt_tokens": 1, "completion_tokens": 1, "parse_failures": 0}
        data = {"id": qid, "strategy": "s", "metrics": metrics, "cost": cost, "wall_seconds": 1.0}
        return EvalRow.from_dict(data, "test")

    a = {"q1": row("q1", 1.0, 1.0), "q2": row("q2", 0.0), "q3": row("q3", 1.0, 0.0)}
    b = {"q1": row("q1", 0.0, 0.0), "q2": row("q2", 1.0), "q3": row("q3", 0.0, 0.0)}
    text = render_markdown({"a": a, "b": b}, baseline="b")
    assert "0.500 (0.000-1.000) [2 of 3]" in text  # recall over the 2 rows that mark passages
    assert "| a | retrieval recall | 2 | +0.500" in text


def test_dataset_rows_choices_as_a_list_and_bad_labels(tmp_path):
    from ragteam.eval.datasets import read_examples

    good = tmp_path / "g.jsonl"
    good.write_text(
        json.dumps({"id": "1", "question": "q", "choices": ["x", "y"], "label": "B"})
        + "\n"
        + json.dumps(
            {
                "id": "2",
                "question": "q",
                "answers": ["z"],
                "supporting_ids": ["p"],
                "evidence": "any",
            }
        )
        + "\n"
    )
    first, second = read_examples(good)
    assert first.choices == {"A": "x", "B": "y"} and first.label == "B"
    assert second.evidence == "any"
    bad = tmp_path / "b.jsonl"
    bad.write_text(
        json.dumps({"id": "1", "question": "q", "choices": {"A": "x"}, "label": "C"}) + "\n"
    )
    with pytest.raises(InputError, match="not one of the choices"):
        read_examples(bad)


def test_report_puts_accuracy_first_for_choice_and_claim_tasks():
    def row(q, acc):
        cost = {"llm_calls": 1, "prompt_tokens": 1, "completion_tokens": 1, "parse_failures": 0}
        metrics = {"choice_accuracy": acc, "em": 0.0, "f1": 0.0, "match": 0.0}
        data = {"id": q, "strategy": "s", "metrics": metrics, "cost": cost, "wall_seconds": 1}
        return EvalRow.from_dict(data, "test")

    table = {"a": {"q1": row("q1", 1.0), "q2": row("q2", 0.0)}, "oner": {"q1": row("q1", 0.0)}}
    text = render_markdown(table, baseline="oner")
    assert text.splitlines()[0].startswith("| strategy | n | accuracy |")
    assert (
        "| a | accuracy | 1 | +1.000" in text and "retrieval recall" not in text.split("Paired")[1]
    )


def test_rows_are_typed_and_versioned_and_old_rows_still_load(tmp_path):
    """A row written today says `version: 2` and carries grounding; a version-1 row (no
    version, a cost without parse_failures, no grounding) loads with those filled in."""
    old = {"id": "q1", "strategy": "oner", "metrics": {"f1": 1.0}, "cost": {"llm_calls": 2}}
    run = RunDir(tmp_path / "run")
    run.open({})
    run.append({**old, "wall_seconds": 1.5, "prediction": "Hevik"})
    [row] = run.rows()
    assert row.version == 1 and row.cost.parse_failures == 0.0 and row.cost.llm_calls == 2.0
    assert row.prediction == "Hevik" and row.grounding == ""
    fresh = EvalRow("q2", "nor", {"f1": 0.0}, row.cost, 0.1, grounding="no_evidence")
    run.append(fresh)
    data = json.loads(run.results_path.read_text().splitlines()[-1])
    assert data["version"] == 2 and data["grounding"] == "no_evidence"
    assert EvalRow.from_dict(data, "x") == fresh
    with pytest.raises(InputError, match="x:3 is not a result row: 'cost'"):
        EvalRow.from_dict({**old, "cost": 5, "wall_seconds": 1}, "x:3")
    for bad in ({**old, "cost": {"llm_calls": "two"}}, {**old, "version": "v2"}):
        with pytest.raises(InputError, match="x:4 is not a result row: a cost or its version"):
            EvalRow.from_dict({**bad, "wall_seconds": 1}, "x:4")
    for trace in ("a string", ["a", "list"], {"steps": "x"}, {"steps": [1]}):  # D8r
        with pytest.raises(InputError, match="x:5 is not a result row: '?trace|its trace"):
            EvalRow.from_dict({**old, "wall_seconds": 1, "trace": trace}, "x:5")


def test_report_pairs_on_the_task_metric_first():
    """PopQA is scored by match: `--metric match` compares on it before F1."""

    def row(q, match, f1):
        cost = {"llm_calls": 1, "prompt_tokens": 1, "completion_tokens": 1}
        data = {
            "id": q,
            "strategy": "s",
            "metrics": {"em": 0.0, "f1": f1, "match": match},
            "cost": cost,
            "wall_seconds": 1,
        }
        return EvalRow.from_dict(data, "test")

    a = {"q1": row("q1", 1.0, 0.2), "q2": row("q2", 1.0, 0.1)}
    b = {"q1": row("q1", 0.0, 0.4), "q2": row("q2", 0.0, 0.3)}
    text = render_markdown({"a": a, "oner": b}, metric="match")
    paired = text.split("Paired differences")[1].splitlines()
    rows = [line for line in paired if line.startswith("| a |")]
    assert rows[0].startswith("| a | match | 2 | +1.000") and rows[1].startswith("| a | F1 |")
    assert "| a | match |" not in render_markdown({"a": a, "oner": b})


def test_gold_shown_counts_only_the_passages_the_reader_was_shown():
    """smart retrieves more than it shows (max_passages): retrieval recall counts every hit,
    `gold shown` only the passages the strategy says the reading model saw."""
    from ragteam.eval.datasets import Example
    from ragteam.eval.runner import score
    from ragteam.trace import Trace
    from ragteam.types import Answer, Passage, Retrieved

    def answer(shown: list[str] | None) -> Answer:
        retrieved = Retrieved()
        found = {d: Passage(f"{d}#0", d, "text", d) for d in ("a", "gold1", "gold2")}
        retrieved.add(list(found.values()), "q")
        if shown is not None:
            retrieved.show([found[d] for d in shown])
        work = retrieved.work(Trace().tally)
        return Answer(question="q", text="x", strategy="smart", work=work)

    example = Example(id="q", question="q", answers=("x",), supporting_ids=("gold1", "gold2"))
    cut = score(example, answer(["a", "gold1"]))
    assert cut["retrieval_all"] == 1.0 and cut["shown_all"] == 0.0
    assert cut["shown_fraction"] == 0.5
    assert "shown_all" not in score(example, answer(None))  # not recorded: not invented

    def row(q, shown):
        cost = {"llm_calls": 1, "prompt_tokens": 1, "completion_tokens": 1}
        metrics = {"em": 0.0, "f1": 0.5, "match": 0.0, "retrieval_all": 1.0, "shown_all": shown}
        data = {"id": q, "strategy": "s", "metrics": metrics, "cost": cost, "wall_seconds": 1}
        return EvalRow.from_dict(data, "test")

    a = {"q1": row("q1", 0.0), "q2": row("q2", 1.0)}
    b = {"q1": row("q1", 1.0), "q2": row("q2", 1.0)}
    text = render_markdown({"a": a, "oner": b})
    assert "gold shown (all)" in text and "| a | 2 |" in text
    assert "| a | gold shown | 2 | -0.500" in text


def test_eval_answers_with_the_default_strategy_when_none_is_named(bm25_index_dir, tmp_path):
    """`ragteam eval` without -s runs the strategy `ragteam ask` answers with (the registry's
    default), not another: a run's numbers are those of what a user gets."""
    from ragteam.strategies import DEFAULT_STRATEGY

    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(QUESTIONS[0]) + "\n")
    args = ["eval", "--data", str(data), "--index", str(bm25_index_dir)]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    rows = (tmp_path / "run" / "results.jsonl").read_text().splitlines()
    assert [json.loads(r)["strategy"] for r in rows] == [DEFAULT_STRATEGY]
