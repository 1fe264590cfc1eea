"""Verdicts: a claim gets true/false and a multiple-choice question an option label from the
fitted decision over the reader's reading (never free text), the verdict names the passage it
rests on or says it rests on none; the fitting recovers a signal planted in its features and
falls back to the majority label when it cannot beat it; a verdict file that is missing,
broken or fitted with another reader is a clear error naming it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragteam.common.linear import logistic
from ragteam.errors import InputError
from ragteam.formats import TRUE_FALSE, Posed
from ragteam.verdict import default_verdicts, load_verdicts
from ragteam.verdict.training.fit import _conditional_logit, _fit_claims


def test_a_posed_question_is_searched_without_its_instruction():
    posed = Posed("Which is bigger?\nThink of mass.", {"A": "the sun", "B": "moon: a rock"})
    assert posed.text.startswith("Given two answer candidates")
    assert posed.search == "Which is bigger?\nThink of mass.\nA: the sun\nB: moon: a rock"
    assert Posed("The sky is green.", claim=True).search == "The sky is green."
    assert Posed("Who built it?").search == "Who built it?"
    # an open question that opens with a format's instruction is still open: nothing is parsed
    tricky = Posed(f"{TRUE_FALSE}\nThe sky is green.")
    assert (tricky.format, tricky.search, tricky.text) == ("open", tricky.stem, tricky.stem)


def test_logistic_fit_recovers_a_planted_signal():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 3))
    y = (x[:, 1] > 0).astype(float)
    w = logistic(x, y, l2=1.0)
    assert abs(w[1]) > 3 * max(abs(w[0]), abs(w[2]))
    assert ((x @ w[:-1] + w[-1] > 0) == (y == 1)).mean() > 0.95


def test_the_options_softmax_learns_which_feature_marks_the_answer():
    rng = np.random.default_rng(1)
    groups, gold = [], []
    for _ in range(200):
        x = rng.normal(size=(4, 2))
        g = int(rng.integers(4))
        x[g, 0] += 2.0  # feature 0 marks the answer, feature 1 is noise
        groups.append(x)
        gold.append(g)
    w = _conditional_logit(groups, gold, l2=1.0)
    assert w[0] > 1.0 and abs(w[1]) < w[0] / 3


def test_a_claim_decision_without_signal_falls_back_to_the_majority_label():
    rng = np.random.default_rng(2)
    rows = [{"id": f"c{i}", "label": "true" if i % 10 < 7 else "false"} for i in range(300)]
    features = [rng.normal(size=4) for _ in rows]  # noise: nothing to learn
    decision = _fit_claims(rows, features, share=0.3)
    assert decision.majority == "true"
    if decision.use_majority:
        assert decision.label(0.0) == decision.label(1.0) == "true"
    else:  # the fit happened to beat the majority on the held rows: it says by how much
        assert decision.held["accuracy"] > decision.held["majority"]


def test_a_claim_and_a_multiple_choice_question_get_labels_from_read(bm25_index_dir):
    from ragteam import answer

    claim = answer(
        "The Wrenhold Lighthouse was built by Emrik Tollan.",
        index=bm25_index_dir,
        strategy="read",
        claim=True,
    )
    assert claim.text in ("true", "false")
    assert claim.why, claim.to_dict()
    step = [s for s in claim.trace.steps if s.role == "verdict"][0]
    assert set(step.output["scores"]) == {"true", "false"}
    assert step.output["label"] == claim.text
    level = claim.grounding().level  # labelled like any answer, never "unchecked"
    if step.output["passage_id"]:  # the verdict rests on a passage: it is cited
        assert [c.passage_id for c in claim.citations] == [step.output["passage_id"]]
        assert level == "supported"
    else:
        assert "neither support nor contradict" in claim.why
        assert level == "not_supported" and not claim.citations
    assert claim.read and claim.support.read == tuple(c.passage_id for c in claim.read)

    choices = {"A": "Emrik Tollan", "B": "Ana Lind", "C": "Maren Holt", "D": "the ferry"}
    picked = answer(
        "Who built the Wrenhold Lighthouse?",
        index=bm25_index_dir,
        strategy="read",
        choices=choices,
    )
    assert picked.text in choices
    step = [s for s in picked.trace.steps if s.role == "verdict"][0]
    scores = step.output["scores"]
    assert set(scores) == set(choices) and abs(sum(scores.values()) - 1) < 1e-3
    assert max(scores, key=scores.get) == picked.text
    assert "llm" not in [s.kind for s in picked.trace.steps]


def test_bad_verdict_files_are_clear_errors_naming_them(tmp_path):
    from ragteam.reader import load_reader

    identity = load_reader().identity
    with pytest.raises(InputError, match="train verdict"):
        load_verdicts(identity, tmp_path / "none.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match="broken.json"):
        load_verdicts(identity, broken)
    other = tmp_path / "other.json"
    data = json.loads(default_verdicts().read_text(encoding="utf-8"))
    other.write_text(json.dumps({**data, "reader": "another-reader@0"}), encoding="utf-8")
    with pytest.raises(InputError, match="another-reader@0"):
        load_verdicts(identity, other)
    assert load_verdicts(identity).reader == identity  # the shipped file fits the shipped reader


def _formats_folder(tmp_path):
    """A tiny formats training folder: claims that the passages back or contradict, and
    multiple-choice rows whose answer a passage names, with the corpus and its index."""
    from ragteam.retrieval import build_index

    folder = tmp_path / "formats"
    folder.mkdir()
    towns = ["Hevik", "Wrenhold", "Osterby", "Lund", "Karsk", "Tavel", "Morra", "Bryn"]
    trades = ["salt", "amber", "tin", "wool", "herring", "timber", "glass", "rope"]
    corpus, claims, choices = [], [], []
    for n, (town, trade) in enumerate(zip(towns, trades, strict=True)):
        corpus.append(
            {"id": f"p{n}", "title": town, "text": f"The town of {town} lives on {trade}."}
        )
        wrong = trades[(n + 1) % len(trades)]
        for k in range(4):
            said, label = (trade, "true") if k % 2 == 0 else (wrong, "false")
            claims.append(
                {"id": f"c{n}-{k}", "question": f"{town} lives on {said}.", "label": label}
            )
        options = {"A": trade, "B": wrong, "C": trades[(n + 2) % 8], "D": trades[(n + 3) % 8]}
        for k in range(4):
            labels = list(options)
            turned = dict(zip(labels, [options[x] for x in labels[k:] + labels[:k]], strict=True))
            gold = next(label for label, text in turned.items() if text == trade)
            choices.append(
                {
                    "id": f"m{n}-{k}",
                    "question": f"What does {town} live on?",
                    "choices": turned,
                    "label": gold,
                }
            )
    for name, rows in [
        ("formats_corpus.jsonl", corpus),
        ("claims_train.jsonl", claims),
        ("multiple_choice_train.jsonl", choices),
    ]:
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    build_index(folder / "formats_corpus.jsonl", tmp_path / "ix", retriever="bm25")
    return folder, tmp_path / "ix"


def test_train_verdict_fits_writes_a_loadable_file_and_resumes(tmp_path):
    from ragteam.reader import load_reader
    from ragteam.verdict.train_settings import VerdictSettings
    from ragteam.verdict.training.fit import fit_verdicts

    folder, index = _formats_folder(tmp_path)
    settings = VerdictSettings(claims=32, choices=32, k=3, held_share=0.3)
    said: list[str] = []
    out = tmp_path / "verdict.json"
    fitted = fit_verdicts(folder, index, out, settings, said.append)
    assert any("32/32 rows read" in line for line in said)
    loaded = load_verdicts(load_reader().identity, out)
    assert loaded.claim.held == fitted.claim.held and loaded.claim.held["rows"] >= 2
    assert len(loaded.claim.linear.weights) == len(loaded.claim.linear.mean)
    again: list[str] = []
    fit_verdicts(folder, index, out, settings, again.append)
    assert any("32 of 32 rows read before, resuming" in line for line in again)
    assert not any("rows read (" in line for line in again)  # nothing read a second time


def test_ask_poses_claims_and_choices_from_the_command_line(bm25_index_dir):
    from typer.testing import CliRunner

    from ragteam.cli import app

    runner = CliRunner()
    base = ["ask", "--index", str(bm25_index_dir), "-s", "read", "--json"]
    said = runner.invoke(
        app, [*base[:1], "Emrik Tollan built the Wrenhold Lighthouse.", *base[1:]] + ["--claim"]
    )
    assert said.exit_code == 0, said.output
    shown = json.loads(said.output)
    assert shown["answer"] in ("true", "false") and shown["why"]
    picked = runner.invoke(
        app,
        [*base[:1], "Who built the Wrenhold Lighthouse?", *base[1:]]
        + ["--choice", "A=Emrik Tollan", "--choice", "B=Ana Lind"],
    )
    assert picked.exit_code == 0, picked.output
    assert json.loads(picked.output)["answer"] in ("A", "B")
    bad = runner.invoke(app, [*base[:1], "Who?", *base[1:], "--choice", "A Emrik"])
    assert bad.exit_code != 0 and "LABEL=TEXT" in bad.output


def test_the_http_api_and_the_chat_reply_say_the_verdict_and_why(bm25_index_dir):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from ragteam.llm import FakeModel
    from ragteam.server import ServerConfig, create_app

    config = ServerConfig(indexes={"demo": bm25_index_dir})
    client = TestClient(create_app(config, FakeModel(lambda m, p: "unused")))
    body = {"question": "Emrik Tollan built the Wrenhold Lighthouse.", "index": "demo"}
    got = client.post("/v1/answer", json={**body, "strategy": "read", "claim": True})
    assert got.status_code == 200, got.text
    assert got.json()["answer"] in ("true", "false") and got.json()["why"]
    chat = client.post(
        "/v1/chat/completions",
        json={
            "model": "read@demo",  # the index is named in the model, not in the extension
            "messages": [{"role": "user", "content": body["question"]}],
            "ragteam": {"claim": True},
        },
    )
    assert chat.status_code == 200, chat.text
    reply = chat.json()["choices"][0]["message"]["content"]
    assert reply.split()[0].strip(".") in ("true", "false") and "Why: " in reply


def test_every_strategys_claim_is_decided_by_the_fitted_verdicts_unless_asked(bm25_index_dir):
    """`oner` with a model that always says "False": by default the label is the fitted
    verdict's over the passages `oner` read (its own "false" kept in the trace); with
    `verdicts="own"` it is the model's, unchecked; an unknown mode is a clear error."""
    from ragteam import answer
    from ragteam.llm import FakeModel

    claim = "The Wrenhold Lighthouse was built by Emrik Tollan."
    said_false = FakeModel(lambda messages, params: "False.")
    fitted = answer(claim, index=bm25_index_dir, strategy="oner", model=said_false, claim=True)
    steps = fitted.trace.steps
    own = [s for s in steps if s.meta.get("event") == "own_verdict"]
    assert len(own) == 1 and own[0].meta["said"] == "false"
    verdict = [s for s in steps if s.role == "verdict" and s.kind == "read"][0]
    retrieved = [s for s in steps if s.kind == "retrieve"][0]
    read = [p["id"] for p in retrieved.output][:5]
    assert verdict.input["passages"] == read  # what oner read, nothing else
    assert fitted.text == verdict.output["label"] and fitted.text in ("true", "false")
    assert fitted.why == verdict.output["reason"]
    assert fitted.grounding().level in ("supported", "not_supported")  # checked, never unchecked
    assert [c.passage_id for c in fitted.read] == read

    mine = answer(
        claim, index=bm25_index_dir, strategy="oner", model=said_false, claim=True, verdicts="own"
    )
    assert mine.text == "false" and mine.grounding().level == "unchecked"
    assert not [s for s in mine.trace.steps if s.role == "verdict"]
    blind = answer(claim, strategy="nor", model=said_false, claim=True)  # reads no passage
    assert blind.text in ("true", "false") and "no passage was read" in blind.why
    assert not blind.citations and blind.grounding().level != "supported"
    with pytest.raises(InputError, match="fitted, own"):
        answer(
            claim,
            index=bm25_index_dir,
            strategy="oner",
            model=said_false,
            claim=True,
            verdicts="mine",
        )


def test_the_command_line_says_who_decides_a_claim_and_refuses_an_unknown_mode():
    from typer.testing import CliRunner

    from ragteam.cli import app

    runner = CliRunner()
    bad = runner.invoke(app, ["ask", "The sky is green.", "--claim", "--verdicts", "mine"])
    assert bad.exit_code != 0 and "fitted, own" in bad.output
    for command in (["ask", "--help"], ["eval", "--help"]):
        assert "--verdicts" in runner.invoke(app, command).output


def test_who_decides_a_claim_is_asked_the_same_way_over_http_and_chat(bm25_index_dir):
    """`verdicts` is one of the answer options the server declares once (`AskOptions`): the
    page's body and the chat extension both take it, and it reaches the answer (with "own"
    the model's "False." is the verdict, unchecked); an unknown mode is refused, naming both."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from ragteam.llm import FakeModel
    from ragteam.server import ServerConfig, create_app

    config = ServerConfig(indexes={"demo": bm25_index_dir})
    said_false = FakeModel(lambda messages, params: "False.")
    client = TestClient(create_app(config, said_false))
    claim = "The Wrenhold Lighthouse was built by Emrik Tollan."
    body = {"question": claim, "index": "demo", "strategy": "oner", "claim": True}
    own = client.post("/v1/answer", json={**body, "verdicts": "own"})
    assert own.status_code == 200, own.text
    assert own.json()["answer"] == "false" and own.json()["grounding"]["level"] == "unchecked"
    fitted = client.post("/v1/answer", json=body)
    assert fitted.json()["grounding"]["level"] != "unchecked"  # the fitted verdicts decided
    chat = client.post(
        "/v1/chat/completions",
        json={
            "model": "oner@demo",
            "messages": [{"role": "user", "content": claim}],
            "ragteam": {"claim": True, "verdicts": "own"},
        },
    )
    assert chat.status_code == 200, chat.text
    assert chat.json()["choices"][0]["message"]["content"].startswith("false")
    bad = client.post("/v1/answer", json={**body, "verdicts": "mine"})
    assert bad.status_code in (400, 422) and "fitted" in bad.text and "own" in bad.text
