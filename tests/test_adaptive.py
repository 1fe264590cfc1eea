"""The `adaptive` strategy and `ragteam feedback`, on a scripted model and a real BM25 index."""

import pytest
from typer.testing import CliRunner

from ragteam.asking.api import answer
from ragteam.asking.where import Loaded
from ragteam.cli import app
from ragteam.errors import InputError
from ragteam.llm import FakeModel
from ragteam.router.features import OneHot, QuestionFeatures
from ragteam.router.simulate import Setup, train
from ragteam.router.state import RouterState, load_state, read_pending, save_state
from ragteam.router.table import AgentOutcome, Question


def _state(tmp_path, features):
    questions = [
        Question(
            f"q{i}",
            f"Who built thing {i}?",
            ("x",),
            "AB"[i % 2],
            {"nor": AgentOutcome("x" if i % 2 else "y", 0.5), "oner": AgentOutcome("x", 3.0)},
        )
        for i in range(8)
    ]
    router = train(questions, features.fit(questions), Setup(agents=("nor", "oner"), epochs=5))
    path = tmp_path / "router.json"
    save_state(path, RouterState.from_router(router))
    return path


def _feedback_id(index_dir, path, **options):
    """Answer one question with the adaptive strategy; the feedback id it leaves waiting."""
    result = answer(
        "Who designed the Tarrin Bridge?",
        index=index_dir,
        strategy="adaptive",
        model=FakeModel(lambda m, p: "Ilse Marrow"),
        options={"state": str(path), **options},
    )
    return next(s for s in result.trace.steps if s.role == "router").meta["feedback_id"]


def test_adaptive_runs_the_chosen_strategies_votes_and_learns(bm25_index_dir, tmp_path):
    path = _state(tmp_path, QuestionFeatures(dims=0))
    before = path.read_bytes()
    model = FakeModel(lambda messages, params: "Emrik Tollan")
    result = answer(
        "Who built the Wrenhold Lighthouse?",
        index=bm25_index_dir,
        strategy="adaptive",
        model=model,
        options={"state": str(path)},
    )
    assert result.text == "Emrik Tollan" and result.strategy == "adaptive"
    [note] = [s for s in result.trace.steps if s.role == "router"]
    agents = note.meta["action"]
    assert set(agents) <= {"nor", "oner"} and agents
    llm_roles = {s.role for s in result.trace.steps if s.kind == "llm"}
    assert llm_roles == {f"{a}/answerer" for a in agents}
    fid = note.meta["feedback_id"]
    assert result.to_dict()["feedback_id"] == fid  # the answer's own field, for clients
    assert fid in read_pending(path)
    assert path.read_bytes() == before  # answering appends to the log, never rewrites the state

    runner = CliRunner()
    ok = runner.invoke(app, ["feedback", fid, "--correct", "--state", str(path)])
    assert ok.exit_code == 0, ok.output
    state = load_state(path)
    assert state.updates == 1 and fid not in read_pending(path)
    again = runner.invoke(app, ["feedback", fid, "--wrong", "--state", str(path)])
    assert again.exit_code == 2 and "was already given" in again.output
    both = runner.invoke(app, ["feedback", fid, "--wrong", "--correct", "--state", str(path)])
    assert both.exit_code == 2 and "exactly one" in both.output


def test_feedback_with_an_answer_scores_f1(bm25_index_dir, tmp_path):
    from ragteam.router.online import give_feedback

    path = _state(tmp_path, QuestionFeatures(dims=0))
    fid = _feedback_id(bm25_index_dir, path, explore=False)
    before = load_state(path).model
    reward = give_feedback(path, fid, gold="Marrow")
    assert 0.5 < reward <= 2 / 3  # F1 2/3 less a small cost penalty
    assert load_state(path).model != before


def test_a_router_on_oracle_labels_is_refused_online(bm25_index_dir, tmp_path):
    path = _state(tmp_path, OneHot(("A", "B")))
    with pytest.raises(InputError, match="--features question"):
        answer(
            "Who?",
            index=bm25_index_dir,
            strategy="adaptive",
            model=FakeModel(["x"]),
            options={"state": str(path)},
        )


def test_router_cli_train_evaluate_reproduce(tmp_path):
    from pathlib import Path

    aqa = Path(__file__).resolve().parent / "data" / "aqa"
    runner = CliRunner()
    state = tmp_path / "r.json"
    trained = runner.invoke(
        app,
        [
            "router",
            "train",
            "--log",
            str(aqa / "train_aware_210_51_complete.jsonl"),
            "--features",
            "onehot",
            "--out",
            str(state),
        ],
    )
    assert trained.exit_code == 0, trained.output
    assert "trained on 210 questions, 7 actions" in trained.output
    ev = runner.invoke(
        app,
        [
            "router",
            "evaluate",
            "--state",
            str(state),
            "--log",
            str(aqa / "test_aware_210_51_complete.jsonl"),
        ],
    )
    assert ev.exit_code == 0 and "F1 0.6876" in ev.output
    rep = runner.invoke(app, ["router", "reproduce-aqa", "--data", str(aqa), "--seeds", "2"])
    assert rep.exit_code == 0 and "| AQA (T) |" in rep.output and "Spread over seeds" in rep.output


def test_router_trains_on_our_own_eval_runs(bm25_index_dir, tmp_path):
    import json

    from ragteam.eval.datasets import read_examples
    from ragteam.eval.rundir import RunDir
    from ragteam.eval.runner import EvalPlan, run_eval
    from ragteam.retrieval import load_index
    from ragteam.router.table import from_runs

    data = tmp_path / "q.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "question": q, "answers": [a]}) + "\n"
            for i, (q, a) in enumerate(
                [
                    ("Who built the Wrenhold Lighthouse?", "Emrik Tollan"),
                    ("Where was Jonas Vell born?", "Hevik"),
                ]
            )
        )
    )
    plan = EvalPlan(read_examples(data), {"nor": {}, "oner": {}}, data)
    run_eval(
        plan,
        RunDir(tmp_path / "run"),
        Loaded(FakeModel(lambda m, p: "Hevik"), load_index(bm25_index_dir)),
    )
    table = from_runs([tmp_path / "run"])
    assert [sorted(q.agents) for q in table] == [["nor", "oner"]] * 2
    assert table[1].agents["oner"].prediction == "Hevik" and table[1].agents["oner"].calls == 1
    state = tmp_path / "r.json"
    result = CliRunner().invoke(
        app,
        [
            "router",
            "train",
            "--runs",
            str(tmp_path / "run"),
            "--agents",
            "nor,oner",
            "--pca-dims",
            "0",
            "--out",
            str(state),
            "--epochs",
            "3",
        ],
    )
    assert result.exit_code == 0, result.output
    assert load_state(state).actions == [["nor"], ["oner"], ["nor", "oner"]]


def test_feedback_without_state_uses_the_default_path(tmp_path, monkeypatch):
    """The README's exact command: `ragteam feedback ID --correct`, no --state."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    from ragteam.router.state import default_state_path

    result = CliRunner().invoke(app, ["feedback", "nope", "--correct"])
    assert result.exit_code == 2, result.output
    assert "no router state" in result.output and "TypeError" not in result.output
    assert str(tmp_path / "data") in str(default_state_path())


def test_a_state_of_the_wrong_shape_is_a_clear_error(tmp_path):
    import json

    from ragteam.router.state import RouterStateError

    path = _state(tmp_path, QuestionFeatures(dims=0))
    data = json.loads(path.read_text())
    del data["setup"]["reward"]
    path.write_text(json.dumps(data))
    with pytest.raises(RouterStateError, match="corrupt"):
        load_state(path)


def test_runs_of_one_strategy_with_different_options_cannot_feed_one_router(tmp_path):
    import json

    from ragteam.errors import InputError
    from ragteam.eval.datasets import load_dataset
    from ragteam.eval.rundir import RunDir
    from ragteam.eval.runner import EvalPlan, run_eval
    from ragteam.llm import FakeModel
    from ragteam.router.table import from_runs, run_options

    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "Q?", "answers": ["Paris"]}) + "\n")
    for name, k in (("a", 3), ("b", 5)):
        plan = EvalPlan(load_dataset(data), {"nor": {"max_answer_tokens": 8 * k}}, data)
        run_eval(plan, RunDir(tmp_path / name), Loaded(FakeModel(lambda m, p: "Paris"), None))
    assert run_options([tmp_path / "a"]) == {"nor": {"max_answer_tokens": 24}}
    with pytest.raises(InputError, match="ran with options"):
        from_runs([tmp_path / "a", tmp_path / "b"])


def test_the_live_router_runs_arms_with_their_trained_options(bm25_index_dir, tmp_path):
    import json

    path = _state(tmp_path, QuestionFeatures(dims=0))
    data = json.loads(path.read_text())
    data["setup"]["agent_options"] = {"oner": {"k": 2}, "nor": {}}
    data["actions"] = [["oner"] for _ in data["actions"]]  # whichever arm wins, oner answers
    path.write_text(json.dumps(data))
    model = FakeModel(lambda messages, params: "Emrik Tollan")
    result = answer(
        "Who built the Wrenhold Lighthouse?",
        index=bm25_index_dir,
        strategy="adaptive",
        model=model,
        options={"state": str(path), "explore": False},
    )
    retrievals = [s for s in result.trace.steps if s.kind == "retrieve"]
    assert retrievals and all(s.input["k"] == 2 for s in retrievals)


def test_a_damaged_pending_log_hurts_only_its_bad_lines(bm25_index_dir, tmp_path):
    import json

    from ragteam.router.online import give_feedback
    from ragteam.router.state import pending_log

    path = _state(tmp_path, QuestionFeatures(dims=0))
    fid = _feedback_id(bm25_index_dir, path)
    log = pending_log(path)
    good = json.loads(log.read_text().splitlines()[-1])
    bad_x = dict(good, id="bad-x", x=[1.0] * 7)
    bad_action = dict(good, id="bad-action", action=999)
    with log.open("ab") as handle:
        handle.write(b'["not an object"]\n{"no": "id"}\n{"id": "\xff\xfe"}\n')
        handle.write((json.dumps(bad_x) + "\n" + json.dumps(bad_action) + "\n").encode())
    before = load_state(path).model
    for damaged in ("bad-x", "bad-action"):
        with pytest.raises(InputError, match="damaged"):
            give_feedback(path, damaged, correct=True)
    assert load_state(path).model == before  # nothing broadcast into the matrices
    assert give_feedback(path, fid, correct=True) > 0


def test_feedback_with_nan_features_is_refused_and_survives_a_failed_write(
    bm25_index_dir, tmp_path, monkeypatch
):
    """D7r: NaN features never reach the router. N2: when the new state cannot be written
    (a full disk), the answer still waits for its feedback: nothing is marked done."""
    import json

    from ragteam.router import state as state_module
    from ragteam.router.online import give_feedback
    from ragteam.router.state import pending_log

    path = _state(tmp_path, QuestionFeatures(dims=0))
    fid = _feedback_id(bm25_index_dir, path)
    log = pending_log(path)
    good = json.loads(log.read_text().splitlines()[-1])
    nan = dict(good, id="nan-x", x=[float("nan")] * len(good["x"]))
    with log.open("a") as handle:
        handle.write(json.dumps(nan) + "\n")  # json writes NaN, as a broken writer would
    before = load_state(path).model
    with pytest.raises(InputError, match="not finite"):
        give_feedback(path, "nan-x", correct=True)
    assert load_state(path).model == before

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(state_module, "_write", full_disk)
    with pytest.raises(OSError):
        give_feedback(path, fid, correct=True)
    monkeypatch.undo()
    assert fid in read_pending(path) and load_state(path).updates == 0  # not lost
    assert give_feedback(path, fid, correct=True) > 0 and fid not in read_pending(path)


def test_feedback_on_a_full_disk_is_a_message_and_loses_nothing(bm25_index_dir, tmp_path):
    """N2: `ragteam feedback` when the disk takes no more (a real write limit, RLIMIT_FSIZE,
    in a child process): a clear message and exit 2, no traceback; the state, its backup and
    the waiting answer are as they were; the same command then succeeds."""
    from limited_disk import run_limited

    path = _state(tmp_path, QuestionFeatures(dims=0))
    fid = _feedback_id(bm25_index_dir, path)
    save_state(path, load_state(path))  # a backup exists: it must stay whole
    backup = path.with_name(path.name + ".bak")
    state_bytes, backup_bytes = path.read_bytes(), backup.read_bytes()
    argv = ["feedback", fid, "--correct", "--state", str(path)]
    refused = run_limited(argv, max_file_bytes=len(backup_bytes) // 2)
    assert refused.returncode == 2, refused.stderr
    assert "could not write" in refused.stderr and "Traceback" not in refused.stderr
    assert path.read_bytes() == state_bytes and backup.read_bytes() == backup_bytes
    assert fid in read_pending(path)
    done = run_limited(argv, max_file_bytes=None)
    assert done.returncode == 0 and "router updated" in done.stdout, done.stderr
    assert fid not in read_pending(path)


def test_feedback_cut_off_after_its_update_is_not_applied_twice(bm25_index_dir, tmp_path):
    """N2: a crash after the new state is written but before the log says so (the entry
    still waits) must not apply the same reward again on the next try."""
    from ragteam.router.online import give_feedback
    from ragteam.router.state import pending_log

    path = _state(tmp_path, QuestionFeatures(dims=0))
    fid = _feedback_id(bm25_index_dir, path)
    log = pending_log(path)
    waiting = log.read_bytes()
    give_feedback(path, fid, correct=True)
    log.write_bytes(waiting)  # as if cut off before the `done` line was written
    assert fid in read_pending(path)
    applied = load_state(path)
    with pytest.raises(InputError, match="already given"):
        give_feedback(path, fid, correct=True)
    assert load_state(path).model == applied.model and load_state(path).updates == 1
    assert fid not in read_pending(path)  # the log is healed
