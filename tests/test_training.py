"""SMART trajectory construction and the training mask, on the shipped training slices and a real
BM25 index over their paragraphs (no model needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragteam.errors import InputError
from ragteam.retrieval import build_index, load_index
from ragteam.smart.format import EOG, parse
from ragteam.smart.training.build import (
    BuildSettings,
    Item,
    build_item,
    heuristic_intents,
    long_example,
    short_examples,
)
from ragteam.smart.training.data import check_disjoint, read_train_questions
from ragteam.smart.training.dataset import build_dataset, read_all, read_examples, read_splits
from ragteam.smart.training.tokens import IGNORE, masked_spans, tokenize_example
from ragteam.trace import Trace

DATA = Path(__file__).resolve().parent / "data"
TRAIN = DATA / "train"
BENCH = Path(__file__).resolve().parents[1] / "bench" / "data"


@pytest.fixture(scope="module")
def train_index(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("train-idx") / "bm25"
    build_index(TRAIN / "train_corpus_slice.jsonl", out, retriever="bm25", passage_words=0)
    return out


@pytest.fixture(scope="module")
def questions():
    return [
        *read_train_questions(TRAIN / "hotpotqa_train6.jsonl"),
        *read_train_questions(TRAIN / "musique_train3.jsonl"),
    ]


def test_reads_both_formats_and_resolves_sub_question_references(questions):
    kinds = {q.kind for q in questions}
    assert kinds == {"hotpotqa", "musique"}
    musique = [q for q in questions if q.kind == "musique"]
    assert all(q.sub_questions for q in musique)
    assert not any("#1" in s for q in musique for s in q.sub_questions)
    hotpot = [q for q in questions if q.kind == "hotpotqa"][0]
    assert all(hotpot.facts.values())  # gold sentences for every supporting title


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"id": "x", "answers": ["a"]}, ":1: 'question' must be"),
        ({"id": "x", "question": "Q?"}, ":1: 'answers' must be"),
        ({"question": "Q?", "answers": ["a"], "supporting_facts": [["T", 0]], "context": 3}, ":1:"),
    ],
)
def test_bad_rows_name_file_and_line(tmp_path, row, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(InputError, match=message):
        read_train_questions(path)


def test_an_answer_found_in_no_supporting_paragraph_is_an_error_or_skipped(tmp_path):
    row = json.loads((TRAIN / "hotpotqa_train6.jsonl").read_text().splitlines()[0])
    row["answers"] = ["Zanzibar Quintet"]
    path = tmp_path / "unsupported.jsonl"
    path.write_text(json.dumps(row) + "\n" + json.dumps({**row, "id": "ok", "answers": ["no"]}))
    with pytest.raises(InputError, match=r"unsupported.jsonl:1: no answer"):
        read_train_questions(path)
    skipped: list[str] = []
    kept = read_train_questions(path, skip_unsupported=True, skipped=skipped)
    assert [q.id for q in kept] == ["ok"] and skipped == [f"{path}:1"]


def test_training_overlapping_a_test_set_is_refused(tmp_path, questions):
    test_set = tmp_path / "test.jsonl"
    test_set.write_text(json.dumps({"id": "t1", "question": questions[2].question.upper()}) + "\n")
    with pytest.raises(InputError, match="also appears in"):
        check_disjoint(questions, [test_set])
    by_id = tmp_path / "by_id.jsonl"
    by_id.write_text(json.dumps({"id": questions[0].id, "question": "unrelated"}) + "\n")
    with pytest.raises(InputError, match=questions[0].id):
        check_disjoint(questions, [by_id])


def test_shipped_training_data_is_disjoint_from_the_test_questions():
    """The benchmark's training files against dev300, and the test slices against each other."""
    train = [BENCH / "train" / "hotpotqa_train.jsonl", BENCH / "train" / "musique_train.jsonl"]
    questions, _skipped, compared = read_all(
        train, [BENCH / "hotpotqa" / "dev300.jsonl"], skip_unsupported=True
    )
    assert compared == 300 and len(questions) >= 690
    slices = [TRAIN / "hotpotqa_train6.jsonl", TRAIN / "musique_train3.jsonl"]
    assert read_all(slices, [DATA / "hotpotqa" / "dev10.jsonl"], False)[2] == 10


def test_every_item_gets_its_own_retrieval(questions, train_index):
    """The authors' first bug gave every item the last query's passages."""
    index = load_index(train_index)
    settings = BuildSettings(k=2, max_passages=6)
    items = [build_item(q, index, settings) for q in questions]
    for item in items:
        expected: list[str] = []
        for intent in item.trajectory.intents:
            expected += [p.id for p in index.retrieve(intent, 2) if p.id not in expected]
        assert item.passage_ids == expected[:6]
    assert len({tuple(i.passage_ids) for i in items}) == len(items)


def test_question_first_builds_the_retrieval_block_as_inference_does(questions, train_index):
    """Question searched first (MuSiQue's gold sub-questions too), then every intent, then the
    question's further hits until the block holds `max_passages`."""
    index = load_index(train_index)
    settings = BuildSettings(k=2, max_passages=5, question_first=True)
    for q in questions:
        item = build_item(q, index, settings)
        asked = [p.id for p in index.retrieve(q.question, 10)]
        assert item.passage_ids[:2] == asked[:2]
        expected = asked[:2]
        for intent in item.trajectory.intents:
            expected += [p.id for p in index.retrieve(intent, 2) if p.id not in expected]
        expected += [i for i in asked if i not in expected]
        assert item.passage_ids == expected[:5]
        assert len(item.trajectory.passages) == 5  # the slice's index holds enough
    plain = build_item(questions[0], index, BuildSettings(k=2, max_passages=5))
    assert len(plain.passage_ids) <= 4  # without it: only what the intents found


def test_gold_sentences_become_verbatim_relevant_facts(questions, train_index):
    """The authors' second bug (a misspelled 'true') dropped every relevant passage."""
    index = load_index(train_index)
    relevant_total = 0
    for q in questions:
        item = build_item(q, index, BuildSettings())
        for judgement, (title, text) in zip(
            item.trajectory.judgements, item.trajectory.passages, strict=True
        ):
            if judgement.relevant:
                relevant_total += 1
                assert title in q.facts
                squashed = " ".join(text.split())
                assert all(line in squashed for line in judgement.fact.split("\n"))
            elif q.kind == "hotpotqa":
                assert not any(
                    " ".join(s.split()) in " ".join(text.split()) for s in q.facts.get(title, ())
                )
        cited = [j.index for j in item.trajectory.judgements if j.relevant]
        assert item.trajectory.citations == cited
        assert item.trajectory.answer == q.answers[0]
    assert relevant_total >= len(questions)  # every question found some evidence


def test_rendered_examples_parse_back(questions, train_index):
    item = build_item(questions[0], load_index(train_index), BuildSettings())
    long = long_example(item)
    assert parse(long.text[long.prompt_chars :]).judgements == item.trajectory.judgements
    shorts = short_examples(item)
    assert [s.role for s in shorts] == ["reconstructor", "locator", "generator"]
    assert shorts[0].text[shorts[0].prompt_chars :].startswith("Search(")
    assert shorts[1].text[shorts[1].prompt_chars :].endswith("</eol>")
    assert shorts[2].text[shorts[2].prompt_chars :].endswith("</eog>")
    assert all(long.text.startswith(s.text[: s.prompt_chars]) for s in shorts)


def test_no_cite_line_when_nothing_relevant_was_retrieved(questions, train_index):
    q = questions[0]
    empty = load_index(train_index)
    item = build_item(q, empty, BuildSettings(k=1, max_passages=1))
    item.trajectory.judgements = [j for j in item.trajectory.judgements if not j.relevant]
    item.trajectory.citations = []
    assert "[Cite]" not in long_example(item).text
    assert heuristic_intents(q, 3)[0] == q.question.rstrip("?").strip()


class WordTokenizer:
    """Whitespace-and-marker tokenizer with offsets: every token's label can be checked by eye."""

    def __call__(self, text, add_special_tokens=False, return_offsets_mapping=True):
        import re

        spans = [m.span() for m in re.finditer(r"<retrieval>|</retrieval>|[^\s<]+|<|\s+", text)]
        return {"input_ids": list(range(1, len(spans) + 1)), "offset_mapping": spans}


def test_loss_mask_token_by_token():
    prompt = "<|Instruction|>:\nWho?</eoi>\n\n"
    body = (
        "<|Reconstructor|>:\nSearch(x)</eor>\n\n<retrieval>[1] T\nsome text</retrieval>\n\n"
        "<|Locator|>:\n[Irrelevant]: [1] Lacking Supporting Facts</eol>\n\n"
        "<|Generator|>:\nX</eog>"
    )
    text = prompt + body
    tokenized = tokenize_example(WordTokenizer(), text, len(prompt), bos=99)
    spans = WordTokenizer()(text)["offset_mapping"]
    assert tokenized.input_ids[0] == 99 and tokenized.labels[0] == IGNORE
    inside = False
    for (start, end), token, label in zip(
        spans, tokenized.input_ids[1:], tokenized.labels[1:], strict=True
    ):
        piece = text[start:end]
        if start < len(prompt):
            assert label == IGNORE, piece
        elif piece == "<retrieval>":
            assert label == token  # the marker is trained
            inside = True
        elif piece == "</retrieval>":
            assert label == token
            inside = False
        else:
            assert (label == IGNORE) == inside, piece
    assert masked_spans(text, len(prompt))[1] == (
        text.index("<retrieval>") + len("<retrieval>"),
        text.index("</retrieval>"),
    )


def test_build_dataset_writes_splits_and_statistics(questions, train_index, tmp_path):
    out = tmp_path / "traj"
    stats = build_dataset(questions, load_index(train_index), out, BuildSettings())
    assert stats["questions"] == len(questions)
    assert stats["examples_per_role"] == {
        "long": 9,
        "reconstructor": 9,
        "locator": 9,
        "generator": 9,
    }
    assert 0 < stats["relevant_share"] < 1
    assert stats["intent_sources"] == {"heuristic": 6, "gold": 3}
    long = read_examples(out, "long")
    assert {e.split for e in long} == {"train", "validation"}
    with pytest.raises(InputError, match="not empty"):
        build_dataset(questions, load_index(train_index), out, BuildSettings())
    assert not list(tmp_path.glob(".traj.building-*"))


def test_a_larger_build_keeps_the_earlier_splits(questions, train_index, tmp_path):
    """Adding questions never moves an earlier build's questions across train/validation: a
    model trained on the earlier build is validated on questions it never saw."""
    index = load_index(train_index)
    settings = BuildSettings(validation_share=0.3)
    build_dataset(questions[:5], index, tmp_path / "small", settings)
    before = read_splits(tmp_path / "small")
    assert set(before.values()) == {"train", "validation"}
    other = BuildSettings(validation_share=0.3, seed=7)  # another seed would reshuffle them
    build_dataset(questions, index, tmp_path / "big", other, keep_splits=tmp_path / "small")
    after = read_splits(tmp_path / "big")
    assert {q: after[q] for q in before} == before and len(after) == len(questions)
    assert "validation" in {after[q.id] for q in questions[5:]}
    with pytest.raises(InputError, match="items.jsonl"):
        build_dataset(questions, index, tmp_path / "x", settings, keep_splits=tmp_path / "none")


def test_fit_refuses_a_folder_holding_another_run(tmp_path):
    from ragteam.smart.training.fit import FitSettings, _claim_folder

    _claim_folder(tmp_path / "run", FitSettings(lr=1e-4), resume=False)
    with pytest.raises(InputError, match="other settings"):
        _claim_folder(tmp_path / "run", FitSettings(lr=2e-4), resume=True)
    (tmp_path / "run" / "checkpoint").mkdir()
    with pytest.raises(InputError, match="--resume"):
        _claim_folder(tmp_path / "run", FitSettings(lr=1e-4), resume=False)
    _claim_folder(tmp_path / "run", FitSettings(lr=1e-4), resume=True)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x").write_text("x")
    with pytest.raises(InputError, match="not empty"):
        _claim_folder(tmp_path / "other", FitSettings(), resume=False)


def test_a_run_recorded_before_a_setting_existed_resumes(tmp_path):
    """A setting added since the run began counts as its default; any other change refuses."""
    from ragteam.smart.training.fit import FitSettings, _claim_folder

    _claim_folder(tmp_path / "run", FitSettings(lr=1e-4), resume=False)
    recorded = json.loads((tmp_path / "run" / "settings.json").read_text())
    del recorded["decision_weight"]
    (tmp_path / "run" / "settings.json").write_text(json.dumps(recorded))
    _claim_folder(tmp_path / "run", FitSettings(lr=1e-4), resume=True)
    with pytest.raises(InputError, match="other settings"):
        _claim_folder(tmp_path / "run", FitSettings(lr=1e-4, decision_weight=3.0), resume=True)


def test_decision_weight_marks_the_token_where_each_judgement_is_decided():
    prompt = "<|Instruction|>:\n[Relevant]: [1] in the question</eoi>\n\n"
    body = (
        "<|Reconstructor|>:\nSearch(x)</eor>\n\n<retrieval>[1] T\nsome text\n[2] U\nmore"
        "</retrieval>\n\n<|Locator|>:\n[Relevant]: [1] T\nsome text\n"
        "[Irrelevant]: [2] Lacking Supporting Facts</eol>\n\n<|Generator|>:\nX</eog>"
    )
    text = prompt + body
    plain = tokenize_example(WordTokenizer(), text, len(prompt), bos=99)
    assert plain.weights is None
    weighted = tokenize_example(WordTokenizer(), text, len(prompt), bos=99, decision_weight=3.0)
    assert weighted.labels == plain.labels and len(weighted.weights) == len(plain.input_ids)
    spans = WordTokenizer()(text)["offset_mapping"]
    heavy = [text[a:b] for (a, b), w in zip(spans, weighted.weights[1:], strict=True) if w != 1]
    assert heavy == ["[Relevant]:", "[Irrelevant]:"]  # the locator's, not the prompt's
    assert weighted.weights[0] == 1.0  # bos


def test_weighted_loss_is_the_weighted_mean_of_token_losses():
    import torch

    from ragteam.smart.training.losses import collate, collate_weights, trained_loss
    from ragteam.smart.training.tokens import Tokenized

    torch.manual_seed(0)

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(12, 8)
            self.lm_head = torch.nn.Linear(8, 12)
            self.model = self

        def forward(self, input_ids, attention_mask):
            return type("Out", (), {"last_hidden_state": self.embed(input_ids)})()

    model = Tiny()
    ids = [1, 2, 3, 4, 5]
    labels = [IGNORE, IGNORE, 3, 4, 5]
    plain = Tokenized(ids, labels)
    ones = Tokenized(ids, labels, [1.0] * 5)
    heavy = Tokenized(ids, labels, [1.0, 1.0, 1.0, 4.0, 1.0])
    args = collate([plain], 0)
    base = trained_loss(model, *args)
    assert collate_weights([plain]) is None
    assert torch.allclose(trained_loss(model, *args, collate_weights([ones])), base)
    logits = model.lm_head(model.embed(torch.tensor([ids]))[0, 1:4])
    each = torch.nn.functional.cross_entropy(logits, torch.tensor([3, 4, 5]), reduction="none")
    expected = (each * torch.tensor([1.0, 4.0, 1.0])).sum() / 6.0
    got = trained_loss(model, *args, collate_weights([heavy]))
    assert torch.allclose(got, expected) and not torch.allclose(got, base)


def test_item_round_trips_to_dict(questions, train_index):
    item = build_item(questions[-1], load_index(train_index), BuildSettings())
    data = item.to_dict()
    assert data["intent_source"] == "gold" and isinstance(Item(**data).trajectory, dict)
    assert Trace().totals()["llm_calls"] == 0


def test_a_trained_folder_exports_against_the_gguf_its_runs_started_from(tmp_path):
    import json

    from ragteam.smart.training.base_model import base_gguf

    source = tmp_path / "base.gguf"
    source.write_bytes(b"GGUF")
    for run, base in (("run1", str(source)), ("run2", str(tmp_path / "run1" / "model"))):
        (tmp_path / run / "model").mkdir(parents=True)
        (tmp_path / run / "model" / "config.json").write_text("{}")
        (tmp_path / run / "settings.json").write_text(json.dumps({"base": base}))
    assert base_gguf(str(tmp_path / "run2" / "model")) == source  # run2 continued run1
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "config.json").write_text("{}")
    assert base_gguf(str(tmp_path / "other")) is None


def test_training_device_is_checked_before_any_work():
    import torch

    from ragteam.errors import InputError
    from ragteam.smart.training.fit import pick_device

    assert pick_device("cpu") == "cpu"
    assert pick_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(InputError, match="auto, cpu, cuda"):
        pick_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="no CUDA GPU"):
            pick_device("cuda")


@pytest.fixture(scope="module")
def formats_index(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("formats-idx") / "bm25"
    build_index(TRAIN / "formats_corpus_slice.jsonl", out, retriever="bm25", passage_words=0)
    return out


def test_multiple_choice_and_claim_rows_are_posed_and_answered_with_labels(formats_index):
    from ragteam.formats import TRUE_FALSE

    rows = read_train_questions(TRAIN / "formats4.jsonl")
    mc, claim = rows[0], rows[2]
    assert mc.choices and mc.answers == (mc.choices and (mc.answers[0],)) and not mc.claim
    assert "Answer with the option label." in mc.posed and "\nA: " in mc.posed
    assert claim.claim and claim.answers in (("true",), ("false",))
    assert claim.posed.startswith(TRUE_FALSE)
    index = load_index(formats_index)
    for q in (mc, claim):
        item = build_item(q, index, BuildSettings())
        long = long_example(item)
        assert long.text.startswith(long.text[: long.prompt_chars])
        assert q.posed in long.text[: long.prompt_chars]  # the agent sees the format
        parsed = parse(long.text)
        assert parsed.answer == q.answers[0]  # the label, not an option's text
        assert item.format == ("multiple_choice" if q.choices else "claim")
        relevant = [j for j in parsed.judgements if j.relevant]
        gold_shown = [t for t, _ in parsed.passages if t in q.facts]
        assert bool(relevant) == bool(gold_shown)  # its evidence, judged relevant when shown
        assert all(j.fact and j.title in q.facts for j in relevant)


@pytest.mark.parametrize(
    "row, message",
    [
        ({"question": "q", "choices": {"A": "x", "B": "y"}, "label": "C"}, "not one of"),
        ({"question": "q", "label": "maybe"}, "true or false"),
    ],
)
def test_bad_format_rows_name_file_and_line(tmp_path, row, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": "x", "answers": ["x"], **row}) + "\n")
    with pytest.raises(InputError, match=message):
        read_train_questions(path)


def test_choices_as_a_list_and_labelled_rows_without_evidence(tmp_path, formats_index):
    path = tmp_path / "rows.jsonl"
    rows = [
        {"id": "m", "question": "q", "choices": ["x", "y"], "label": "B"},
        {"id": "c", "question": "The sky is green.", "label": "false"},
        {"id": "p", "question": "Who wrote Hamlet?", "answers": ["Shakespeare"]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    mc, claim, plain = read_train_questions(path)
    assert mc.choices == {"A": "x", "B": "y"} and mc.evidence_answers == ("y",)
    assert (mc.kind, claim.kind, plain.kind) == ("noevidence", "noevidence", "plain")
    index = load_index(formats_index)
    for q in (mc, claim):
        item = build_item(q, index, BuildSettings())
        # nothing says which passage supports a label: no locator labels, generator only
        assert item.answer_only and item.label_source == "none"
        assert not any(j.relevant for j in item.trajectory.judgements)
        [example] = short_examples(item)
        assert example.role == "generator" and example.text.endswith(q.answers[0] + EOG)
    assert not build_item(plain, index, BuildSettings()).answer_only


def test_generator_validation_loss_is_also_given_per_format(tmp_path, monkeypatch):
    """A format the model cannot answer must not hide in the generator's mean."""
    from ragteam.smart.training import losses

    items = [("q1", "open"), ("q2", "claim"), ("q3", "claim"), ("q4", "open")]
    splits = {"q4": "train"}
    (tmp_path / "items.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "format": f, "split": splits.get(i, "validation")}) + "\n"
            for i, f in items
        )
    )
    examples = [
        {
            "id": f"{i}/{role}",
            "role": role,
            "text": "x",
            "prompt_chars": 0,
            "split": splits.get(i, "validation"),
        }
        for i, _ in items
        for role in ("locator", "generator")
    ]
    (tmp_path / "short.jsonl").write_text("".join(json.dumps(e) + "\n" for e in examples))
    # (summed loss, trained tokens) per example: the claim answers are the hard ones
    given = {
        "q1/generator": (1.0, 10),
        "q2/generator": (6.0, 2),
        "q3/generator": (2.0, 2),
        "q1/locator": (3.0, 30),
        "q2/locator": (3.0, 30),
        "q3/locator": (3.0, 30),
    }
    monkeypatch.setattr(
        losses, "example_losses", lambda model, held, *a: {e.id: given[e.id] for e in held}
    )
    found = losses.role_losses(None, tmp_path, 1536, None, None, "long")
    assert found == {
        "long:generator": round(9.0 / 14, 4),
        "long:locator": 0.1,
        "long:generator@claim": 2.0,
        "long:generator@open": 0.1,
    }


def test_shuffled_blocks_keep_labels_with_their_passages(questions, train_index, tmp_path):
    """`train build --shuffle-passages` and `train shuffle`: each block in a seeded random
    order; every judgement, fact and citation still names its own passage."""
    from ragteam.smart.training.dataset import read_items, shuffle_dataset
    from ragteam.smart.training.reorder import item_from_dict, shuffle_item

    index = load_index(train_index)
    build_dataset(questions, index, tmp_path / "plain", BuildSettings(question_first=True))
    count = len  # any token counter
    shuffle_dataset(tmp_path / "plain", tmp_path / "mixed", seed=3, count_tokens=count)
    plain = {r["id"]: item_from_dict(r) for r in read_items(tmp_path / "plain")}
    mixed = {r["id"]: item_from_dict(r) for r in read_items(tmp_path / "mixed")}
    assert plain.keys() == mixed.keys()
    moved = 0
    for qid, before in plain.items():
        t, u = before.trajectory, mixed[qid].trajectory
        assert sorted(u.passages) == sorted(t.passages) and u.answer == t.answer
        assert mixed[qid].split == before.split
        moved += u.passages != t.passages
        facts = {t.passages[j.index - 1]: (j.relevant, j.fact) for j in t.judgements}
        assert {u.passages[j.index - 1]: (j.relevant, j.fact) for j in u.judgements} == facts
        assert [j.index for j in u.judgements] == sorted(j.index for j in u.judgements)
        assert sorted(u.passages[c - 1] for c in u.citations) == sorted(
            t.passages[c - 1] for c in t.citations
        )
        by_id = dict(zip(before.passage_ids, t.passages, strict=True))
        assert [by_id[i] for i in mixed[qid].passage_ids] == u.passages
    assert moved >= len(plain) // 2
    again = shuffle_item(plain[next(iter(plain))], 3)  # seeded: the same order every time
    assert again.trajectory == mixed[next(iter(plain))].trajectory
    for example in read_examples(tmp_path / "mixed", "long"):
        parsed = parse(example.text)  # the texts are rendered from the shuffled trajectories
        assert parsed.passages == mixed[example.id.removesuffix("/long")].trajectory.passages
    settings = json.loads((tmp_path / "mixed" / "settings.json").read_text())
    assert settings["build"]["shuffle_passages"] and settings["shuffled_from"].endswith("plain")
    assert settings["build"]["shuffle_seed"] == 3 and settings["build"]["seed"] == 0  # splits' seed
    built = BuildSettings(question_first=True, shuffle_passages=True, seed=3)
    build_dataset(questions, index, tmp_path / "direct", built)
    direct = {r["id"]: item_from_dict(r).trajectory for r in read_items(tmp_path / "direct")}
    assert direct == {q: i.trajectory for q, i in mixed.items()}
    with pytest.raises(InputError, match="not empty"):
        shuffle_dataset(tmp_path / "plain", tmp_path / "mixed", seed=3, count_tokens=count)
