"""The span reader shipped in the package: it reads every passage it is given (the answer in a
later passage is found), its spans are the passage's own words at their offsets, long passages
are read in strided windows, and every bad weights file is a clear error naming it. The `read`
strategy and the `reader` support layer on the real weights and the demo index; `train reader`
on a tiny training folder (train, checkpoint, resume, calibrate)."""

from __future__ import annotations

import copy
import json
import shutil
from dataclasses import replace

import pytest

from ragteam.errors import InputError
from ragteam.reader import default_weights, load_reader
from ragteam.reader.read import calibration_path
from ragteam.types import Passage

FERRY = "The ferry to Hevik leaves from pier two every morning at nine."
MASTER = "The harbour master of Wrenhold is Ana Lind, appointed in 1998."
LIGHT = "The Wrenhold Lighthouse was built by Emrik Tollan in 1871 from local granite."


@pytest.fixture(scope="module")
def reader():
    return load_reader()


def _passages(*texts):
    return [Passage(f"p{i}", "", t) for i, t in enumerate(texts, start=1)]


def test_the_answer_in_a_later_passage_is_found_with_its_offsets(reader):
    passages = _passages(FERRY, MASTER, LIGHT)
    reading = reader.read("Who built the Wrenhold Lighthouse?", passages)
    best = reading.best
    assert best is not None and best.passage_id == "p3"
    assert "Emrik Tollan" in best.text
    assert LIGHT[best.start : best.end] == best.text  # the passage's own words, at their place
    assert best.sentence == LIGHT and best.sentence_start == 0
    scores = [s.score for s in reading.spans]
    assert scores == sorted(scores, reverse=True) and 0 < sum(scores) <= 1.0 + 1e-6


def test_a_passage_longer_than_the_window_is_read_to_its_end(reader):
    filler = " ".join(
        f"Section {n} lists the tide tables of the northern coast." for n in range(80)
    )
    text = f"{filler} The lighthouse keeper in 1920 was Maren Holt."
    reading = reader.read("Who was the lighthouse keeper in 1920?", _passages(text))
    best = reading.best
    assert best is not None and "Maren Holt" in best.text
    assert text[best.start : best.end] == best.text and best.start > 3000


def test_odd_input_reads_without_crashing(reader):
    long_question = "Who built the Wrenhold Lighthouse? " * 115  # 4,000 characters
    assert reader.read(long_question, _passages(LIGHT)).best is not None
    greek = reader.read("Ποιος έχτισε τον φάρο;", _passages("Ο φάρος χτίστηκε το 1871."))
    assert greek.best is None or greek.best.text in "Ο φάρος χτίστηκε το 1871."
    assert reader.read("Who?", []).best is None
    assert reader.read("Who?", _passages("   ")).best is None


def test_passages_read_before_are_not_run_through_the_network_again(monkeypatch):
    """`read`'s second reading re-reads the first passages with new ones: the kept output of
    those gives the reading a fresh reader gives, and only the new passage goes through the
    network; at most KEPT_WINDOWS windows are kept."""
    from ragteam.reader import read as read_module
    from ragteam.reader.read import Reader

    fresh = load_reader()
    net = copy.copy(fresh.net)  # the same tokenizer and encoder, its `windows` counted
    kept = Reader(net, fresh.meta, fresh.digest, fresh.calibration)
    sent: list[list[str]] = []
    windows = net.windows

    def counting(question, texts):
        sent.append(list(texts))
        return windows(question, texts)

    monkeypatch.setattr(net, "windows", counting)
    question = "Who built the Wrenhold Lighthouse?"
    kept.read(question, _passages(FERRY, MASTER))
    again = kept.read(question, _passages(FERRY, MASTER, LIGHT * 30))
    assert sent == [[FERRY, MASTER], [LIGHT * 30]]
    expected = Reader(fresh.net, fresh.meta, fresh.digest, fresh.calibration).read(
        question, _passages(FERRY, MASTER, LIGHT * 30)
    )
    assert [(s.passage_id, s.start, s.end) for s in again.spans] == [
        (s.passage_id, s.start, s.end) for s in expected.spans
    ]
    assert [s.score for s in again.spans] == pytest.approx(
        [s.score for s in expected.spans], rel=1e-4, abs=1e-6
    )
    assert again.no_answer == pytest.approx(expected.no_answer, rel=1e-4, abs=1e-6)
    monkeypatch.setattr(read_module, "KEPT_WINDOWS", 3)  # LIGHT * 30 alone takes more
    kept.read("Who is the harbour master?", _passages(MASTER))
    assert kept.read(question, _passages(FERRY)).best is not None
    assert sent[-1] == [FERRY]  # the least recently used pair was dropped


def test_a_reading_in_bfloat16_finds_the_spans_of_one_in_float32(reader):
    """The encoder's products in bfloat16 (where the processor has them, `native_bf16`) move
    the logits a little and leave the spans found as float32 finds them."""
    import torch

    net = reader.net
    question = "Who built the Wrenhold Lighthouse?"
    windows = net.windows(question, [FERRY, MASTER, LIGHT])
    was, logits, best = net.bf16, {}, {}
    try:
        for bf16 in (False, True):
            net.bf16 = bf16
            with torch.inference_mode():
                logits[bf16] = net.logits(windows)
            found = load_reader().read(question, _passages(FERRY, MASTER, LIGHT)).best
            best[bf16] = (found.passage_id, found.text)  # a fresh reader: nothing kept
    finally:
        net.bf16 = was
    for exact, rough in zip(logits[False], logits[True], strict=True):
        assert exact.dtype == rough.dtype == torch.float32
        assert float((exact - rough).abs().max()) < 0.5
    assert not torch.equal(logits[False][0], logits[True][0])  # bfloat16 really ran
    assert best[False] == best[True] and "Emrik Tollan" in best[True][1]


def test_a_line_break_is_read_as_the_mark_when_the_weights_declare_it(reader):

    from ragteam.reader.model import LINE_MARK

    table = "Setting | Default\nMaxWidgets | 64\nIdleTimeout | 300"
    for mark, expected in ((LINE_MARK, [(17, 18), (33, 34)]), ("", [])):
        net = copy.copy(reader.net)  # the same tokenizer and encoder, another declared mark
        net.line_mark = mark
        windows = net.windows("What is the default of IdleTimeout?", [table])
        tokens = net.tokenizer.convert_ids_to_tokens(windows.inputs["input_ids"][0].tolist())
        at = [o for o, t in zip(windows.offsets[0], tokens, strict=True) if t == LINE_MARK]
        # offsets stay those of the text as it is: each mark stands where its line break stands
        assert at == expected and all(table[a:b] == "\n" for a, b in at)
    best = reader.read("What is the default of IdleTimeout?", _passages(table)).best
    assert best is not None and table[best.start : best.end] == best.text


def _copy(tmp_path, name="r.safetensors"):
    target = tmp_path / name
    shutil.copy(default_weights(), target)
    shutil.copy(calibration_path(default_weights()), calibration_path(target))
    return target


def test_bad_weights_are_clear_errors_naming_the_file(tmp_path):
    with pytest.raises(InputError, match="missing"):
        load_reader(tmp_path / "none.safetensors")
    cut = _copy(tmp_path, "cut.safetensors")
    cut.write_bytes(cut.read_bytes()[:5000])
    with pytest.raises(InputError, match="cut.safetensors"):
        load_reader(cut)
    foreign = tmp_path / "foreign.safetensors"
    import torch
    from safetensors.torch import save_file

    save_file({"x": torch.zeros(2)}, str(foreign), metadata={"format": "something-else"})
    with pytest.raises(InputError, match="no ragteam span reader"):
        load_reader(foreign)
    lost = _copy(tmp_path, "lost.safetensors")
    calibration_path(lost).unlink()
    with pytest.raises(InputError, match="calibration") as lost_error:
        load_reader(lost)
    # the fix names the weights to train again, not the calibration file as --out
    assert f"--out {lost}`" in str(lost_error.value)


def test_read_strategy_answers_with_the_span_its_sentence_and_place(bm25_index_dir):
    from ragteam import answer

    result = answer("Who built the Wrenhold Lighthouse?", index=bm25_index_dir, strategy="read")
    assert result.evidence, result.trace.to_dict()
    best = result.evidence[0]
    assert best.text == result.text and best.text in best.sentence
    assert best.passage_id in [c.passage_id for c in result.read]  # it was read, and checked
    # cited at the span's passage when the reader's confidence (over all the passages, the
    # same words anywhere summed) passes its threshold, and nowhere otherwise (both cases:
    # test_a_reader_span_is_checked_by_its_confidence...). Whether the answer is right is the
    # benchmarks' to say (docs/benchmarks.md §35), not this test's.
    confident = best.score >= load_reader().calibration.span
    assert [c.passage_id for c in result.citations] == ([best.passage_id] if confident else [])
    kinds = [s.kind for s in result.trace.steps]
    assert kinds[:2] == ["retrieve", "read"] and "llm" not in kinds
    shown = result.to_dict()
    assert shown["evidence"][0]["passage_id"] == best.passage_id


def test_read_refuses_k_zero(bm25_index_dir):
    from ragteam import answer

    with pytest.raises(InputError, match="read.k=0: must be between 1"):
        answer("Who?", index=bm25_index_dir, strategy="read", options={"k": 0})


def test_reader_layer_rejects_a_copied_wrong_answer_and_backs_the_right_one():
    from ragteam.support.stage import check_support, support_settings

    passage = Passage(
        "shadow",
        "Passwords",
        "In /etc/shadow the encrypted password field starts with an id: $1$ indicates use of "
        "the MD5 encryption, $5$ SHA-256. The third field is the number of days since "
        "January 1, 1970 that the password was last changed.",
    )
    question = "What does the initial $1$ in an encrypted password in /etc/shadow indicate?"
    settings = support_settings("reader")
    wrong = check_support(question, "the number of days since January 1, 1970", [passage], settings)
    right = check_support(question, "It indicates the MD5 encryption.", [passage], settings)
    assert wrong.layer == right.layer == "reader"
    assert not wrong.sentences[0].supported
    assert right.sentences[0].supported and right.cited == ["shadow"]


def test_a_written_answer_is_labelled_supported_only_when_the_reader_would_give_it():
    """A model's answer whose words a passage holds is backed there (its citation), but its
    label is green only when the reader, reading all the passages, gives that answer with
    confidence: a wrong name copied from a passage that mentions it ("Arvid Tollan") is
    backed by that passage and still not labelled supported."""
    from ragteam.grounding import grounding
    from ragteam.reader.answer import Readers
    from ragteam.support.stage import check_support, support_settings
    from ragteam.types import Work

    light = Passage(
        "light",
        "Wrenhold Lighthouse",
        "The Wrenhold Lighthouse stands on the northern cape of Quillan. It was built in 1786 "
        "by the engineer Emrik Tollan.",
    )
    born = Passage(
        "born",
        "Emrik Tollan",
        "Emrik Tollan was an engineer born in Hevik in 1752. His brother Arvid Tollan built ships.",
    )
    question, settings = "Who built the Wrenhold Lighthouse?", support_settings("reader")
    work = Work(passages=("light", "born"), calls=2)
    readers = Readers()
    reader = readers.get()

    def label(text: str) -> tuple[bool, bool | None, str]:
        found = check_support(question, text, [light, born], settings, readers=readers)
        backed = all(s.supported for s in found.sentences)
        return backed, found.sure, grounding(text, len(found.cited), work, found).level

    # the reader's own confidence in "Emrik Tollan" decides, on its calibrated threshold
    reading = reader.read(question, [light, born], top=8, key_lines=True)
    named = [s for s in reading.spans if s.kind == "span" and s.text.startswith("Emrik Tollan")]
    sure = max(reader.confidence(reading, s, [light, born]) for s in named)
    right = "It was built by the engineer Emrik Tollan in 1786."
    level = "supported" if sure >= reader.calibration.span else "partly_supported"
    assert label(right) == (True, sure >= reader.calibration.span, level)
    # a threshold the reader's confidence reaches labels it; the wrong name stays unlabelled:
    # the per-passage check backs it (the passage says "Arvid Tollan" and "built"), the
    # reader's second check is what keeps it from a green label
    reader.calibration = replace(reader.calibration, span=sure - 0.01)
    assert label(right) == (True, True, "supported")
    assert label("Arvid Tollan built the lighthouse.") == (True, False, "partly_supported")


def test_a_reader_span_is_checked_by_its_confidence_not_by_other_passages_words():
    """`read`'s answer is its own span: an unsure span is not supported because another
    passage shares one of its words ("Northern Sound" for "northern cape of Quillan")."""
    from ragteam.support.stage import check_support, support_settings
    from ragteam.types import Evidence, Span

    where = Passage(
        "light",
        "Wrenhold Lighthouse",
        "The Wrenhold Lighthouse stands on the northern cape of "
        "Quillan. It was built in 1786 by the engineer Emrik Tollan.",
    )
    ferry = Passage(
        "ferry",
        "MV Wrenhold",
        "The MV Wrenhold is a ferry of the Northern Sound Shipping "
        "Company, launched in 1997. It is named after the Wrenhold Lighthouse.",
    )
    question = "Who built the Wrenhold Lighthouse?"
    span = "northern cape of Quillan"
    start = where.text.index(span)
    sentence = "The Wrenhold Lighthouse stands on the northern cape of Quillan."

    def evidence(score):
        read = Span("light", start, start + len(span), span, sentence, 0, score)
        return (Evidence(read, None, score, True),)

    settings = support_settings("reader")
    unsure = check_support(question, span, [where, ferry], settings, evidence=evidence(0.001))
    assert not unsure.sentences[0].supported and not unsure.cited
    sure = check_support(question, span, [where, ferry], settings, evidence=evidence(0.99))
    assert sure.sentences[0].supported and sure.cited == ["light"]


def _training_folder(folder):
    """A tiny training folder in the layout of shared/data/train (invented facts)."""
    folder.mkdir()
    paragraphs = {
        "Wrenhold Lighthouse": [
            "The Wrenhold Lighthouse was built by Emrik Tollan.",
            " It stands on the northern cape.",
        ],
        "Emrik Tollan": ["Emrik Tollan was an engineer born in Hevik in 1822."],
        "Hevik": ["Hevik is a fishing village with a harbour of 300 boats."],
        "Greyfin": ["The Greyfin ferry sails twice a day to the outer islands."],
        "Maple Hill": ["Maple Hill school opened in 1901 with 40 pupils."],
    }
    context = [{"title": t, "sentences": s} for t, s in paragraphs.items()]
    rows = [
        (
            "q1",
            "Where was the builder of the Wrenhold Lighthouse born?",
            "Hevik",
            [["Wrenhold Lighthouse", 0], ["Emrik Tollan", 0]],
        ),
        ("q2", "In what year was Emrik Tollan born?", "1822", [["Emrik Tollan", 0]]),
        ("q3", "How many boats does the harbour of Hevik hold?", "300", [["Hevik", 0]]),
        ("q4", "When did Maple Hill school open?", "1901", [["Maple Hill", 0]]),
    ]
    with (folder / "hotpotqa_train.jsonl").open("w") as out:
        for qid, question, answer, facts in rows:
            out.write(
                json.dumps(
                    {
                        "id": qid,
                        "question": question,
                        "answers": [answer],
                        "context": context,
                        "supporting_facts": facts,
                    }
                )
                + "\n"
            )
    (folder / "musique_train.jsonl").write_text("")
    corpus = [
        {"id": f"tr{n}", "title": t, "text": "".join(s)}
        for n, (t, s) in enumerate(paragraphs.items())
    ]
    (folder / "train_corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus))
    return folder


def test_train_reader_checkpoints_resumes_and_calibrates(tmp_path):
    from ragteam.reader.model import LINE_MARK
    from ragteam.reader.training.settings import ReaderSettings
    from ragteam.reader.training.train import train_reader

    data = _training_folder(tmp_path / "train")
    out = tmp_path / "reader.safetensors"
    settings = ReaderSettings(
        epochs=1.0, accumulate=1, check_every=2, held_checked=4, clozes=4, held_share=0.3, threads=1
    )
    lines: list[str] = []
    first = train_reader(data, out, settings, report=lines.append)
    assert out.is_file() and calibration_path(out).is_file()
    assert first["step"] == first["steps"] and first["history"]
    assert any(line.startswith("step 2/") for line in lines)
    again: list[str] = []
    second = train_reader(data, out, settings, report=again.append)  # resumes: nothing left
    assert any("resumed at step" in line for line in again) and second["step"] == first["step"]
    loaded = load_reader(out)
    assert 0.0 <= loaded.calibration.abstain <= 1.0 + 1e-5
    assert loaded.meta["line_mark"] == LINE_MARK == loaded.net.line_mark  # declared by the file
    record = json.loads(out.with_suffix(".json").read_text())
    assert record["groups"]["train"] > 0 and "hotpotqa-train/span" in record["sources"]
    changed = ReaderSettings(
        epochs=1.0, accumulate=2, check_every=2, held_checked=4, clozes=4, held_share=0.3, threads=1
    )
    with pytest.raises(InputError, match="other settings"):
        train_reader(data, out, changed)


def test_groups_built_once_are_read_back_and_checked_against_the_settings(tmp_path):
    """`--groups`: the first run writes the groups it built; a run with the data folder gone
    reads them back unchanged; other build settings or a foreign file are clear errors."""
    from ragteam.reader.training.settings import ReaderSettings
    from ragteam.reader.training.train import reader_groups

    data = _training_folder(tmp_path / "train")
    file = tmp_path / "groups.jsonl.gz"
    settings = ReaderSettings(clozes=4, held_share=0.3)
    built = reader_groups(data, settings, None, file, lambda _: None)
    assert file.is_file() and built.train
    shutil.rmtree(data)  # the groups alone are enough now
    again = reader_groups(data, settings, None, file, lambda _: None)
    assert again.train == built.train and again.held == built.held
    assert any(g.spans and any(g.spans) for g in again.train)  # spans come back as tuples
    with pytest.raises(InputError, match="pass the same settings"):
        reader_groups(data, ReaderSettings(clozes=5, held_share=0.3), None, file, lambda _: None)
    file.write_bytes(b"not gzip")
    with pytest.raises(InputError, match="cannot be read as reader groups"):
        reader_groups(data, settings, None, file, lambda _: None)


def test_training_on_a_missing_gpu_is_a_clear_error(tmp_path):
    import torch

    from ragteam.reader.training.settings import ReaderSettings
    from ragteam.reader.training.train import train_groups

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    data = _training_folder(tmp_path / "train")
    from ragteam.reader.training.train import reader_groups

    built = reader_groups(data, ReaderSettings(clozes=4), None, None, lambda _: None)
    with pytest.raises(InputError, match="no CUDA device"):
        train_groups(
            built.train,
            built.held,
            tmp_path / "r.safetensors",
            ReaderSettings(device="cuda"),
            lambda _: None,
        )


def test_keep_em_keeps_the_weights_of_the_best_held_em(tmp_path):
    from ragteam.reader.training.settings import ReaderSettings
    from ragteam.reader.training.train import train_reader

    data = _training_folder(tmp_path / "train")
    out = tmp_path / "reader.safetensors"
    settings = ReaderSettings(
        epochs=1.0,
        accumulate=1,
        check_every=2,
        held_checked=4,
        clozes=4,
        held_share=0.3,
        threads=1,
        keep="em",
    )
    record = train_reader(data, out, settings)
    best_em = max(h["em"] for h in record["history"])
    assert record["best"] == -best_em  # the best EM, negated (lower is better for both)
    from safetensors import safe_open

    with safe_open(str(out), "pt") as f:
        assert float(f.metadata()["em"]) == pytest.approx(best_em, abs=1e-4)


def test_held_questions_are_asked_of_a_folder_that_holds_half_their_files():
    """The abstention gate is fitted on questions read over what a search of a folder finds:
    half the files' passages make the folder; the other half's questions have no answer in it."""
    from ragteam.reader.training.calibrate import asked_of_a_folder
    from ragteam.reader.training.data import Group

    held = [
        Group(
            f"What colour is the door of house {n}?",
            (f"House {n} has a {colour} door.", f"House {n} stands on Mill Lane {n}."),
            "span",
            spans=(((len(f"House {n} has a "), len(f"House {n} has a {colour}")),), ()),
            answers=(colour,),
            qid=f"file{n}/0",
        )
        for n, colour in enumerate(["red", "blue", "green", "amber", "grey", "white"] * 4)
    ] + [Group("No answer here?", ("Nothing.",), "none", qid="file0/1")]
    asked = asked_of_a_folder(held, k=2)
    assert len(asked) == 24  # every span question, the no-answer groups left out
    pairs = list(zip(held[:24], asked, strict=True))
    folder = {t for g, a in pairs if a.label == "span" for t in g.texts}
    assert {a.label for a in asked} == {"span", "none"}
    for original, one in pairs:
        assert one.question == original.question and len(one.texts) <= 2
        assert set(one.texts) <= folder  # read over what the folder holds
        if one.label == "none":  # its own file is not in the folder
            assert not set(original.texts) & folder


def test_thresholds_are_fitted_on_questions_not_clozes():
    """A cloze (a sentence with its answer blanked) trains the reader but is not what `read`
    is asked: calibration keeps the held groups that are questions."""
    from ragteam.reader.training.calibrate import questions
    from ragteam.reader.training.data import Group

    held = [
        Group(f"q{n}", ("t",), "span", answers=("a",), source=source, qid=f"f{n}/0")
        for n, source in enumerate(["cloze", "doc-cloze", "doc-table", "hotpotqa-train"])
    ]
    assert [g.source for g in questions(held)] == ["doc-table", "hotpotqa-train"]


def test_support_is_fitted_against_a_passage_that_does_not_hold_the_answer(reader):
    """The support threshold's negatives include the gold answer over a distractor: a passage
    sharing a word with the answer must not count as backing it."""
    import random

    from ragteam.reader.training.calibrate import support_pairs
    from ragteam.reader.training.data import Group

    gold = "The Wrenhold Lighthouse was built in 1786 by the engineer Emrik Tollan of Hevik."
    other = "The Tollan Street market opens on Sundays; its oldest stall sells smoked fish."
    group = Group(
        "Who built the Wrenhold Lighthouse?",
        (other, gold),
        "span",
        ((), ((gold.index("Emrik"), gold.index("Emrik") + len("Emrik Tollan")),)),
        answers=("Emrik Tollan",),
        source="hotpotqa-train",
        qid="f1/0",
    )
    pairs = support_pairs(reader, [group], random.Random(0))
    labels = [y for _, y in pairs]
    assert labels.count(True) == 1 and labels.count(False) == 2  # a copied name, a distractor
    right, *wrong = [s for s, y in sorted(pairs, key=lambda p: not p[1])]
    assert all(right > w for w in wrong)


def test_the_span_threshold_is_the_lowest_that_keeps_labelled_answers_right():
    from ragteam.reader.training.calibrate import precise_threshold

    scored = [(0.9, True), (0.8, True), (0.7, False), (0.6, True), (0.5, False), (0.4, False)]
    assert precise_threshold(scored, target=0.75, least=2) == (0.6, 0.75, 4)
    # out of reach with five or more labelled: nothing is (the best precision recorded)
    assert precise_threshold(scored, target=0.75, least=5) == (1.0 + 1e-9, 0.6, 0)
    # tied scores are one threshold: all of them are in or out together
    tied = [(0.9, True), (0.5, True), (0.5, False), (0.5, False)]
    assert precise_threshold(tied, target=0.6, least=1) == (0.9, 1.0, 1)
    # never reached: nothing is labelled
    assert precise_threshold([(0.9, False), (0.8, False)], 0.8, 1)[0] > 0.9
