"""The support stage: each answer sentence is checked against the passages the team read — by
the lexical layer and by the trained checker shipped in the package (the real MiniLM weights,
no fake) — and the answer cites only what supports it."""

from __future__ import annotations

import pytest

from ragteam import answer
from ragteam.asking import AskRequest
from ragteam.errors import InputError
from ragteam.llm import FakeModel
from ragteam.support.lexical import lexical_score, sentences
from ragteam.support.stage import MAX_SENTENCES, check_support, support_settings
from ragteam.trace import Trace
from ragteam.types import Passage, SupportSettings

QUESTION = "In which village was the engineer who built the Wrenhold Lighthouse born?"
TOLLAN = Passage(
    "halvard-05",
    "Emrik Tollan",
    "Emrik Tollan was an engineer born in the village of Hevik on the island of Fenna. He built "
    "the Wrenhold Lighthouse in 1871.",
)
HERRING = Passage(
    "halvard-09", "Herring fleet", "The herring fleet of Orlen sails each spring to the Sound."
)


def test_sentences_and_the_lexical_layer():
    text = "Emrik Tollan built it. He was born in Hevik!\nThat is all"
    assert [text[a:b] for a, b in sentences(text)] == [
        "Emrik Tollan built it.",
        "He was born in Hevik!",
        "That is all",
    ]
    assert lexical_score(QUESTION, "Hevik", TOLLAN.text) == 1.0
    assert lexical_score(QUESTION, "Hevik", HERRING.text) == 0.0
    # words the question already says do not count as support
    assert lexical_score(QUESTION, "the Wrenhold Lighthouse engineer Dunmere", TOLLAN.text) == 0.0


def test_an_answer_that_adds_nothing_the_question_asks_for_is_not_supported():
    """Seen on real `oner` answers to training questions (docs/benchmarks.md section 29): a
    sentence that repeats the question, or a year copied from a passage for a "which"
    question, used to count as supported because every word of it was in a passage."""
    echo = "The engineer who built the Wrenhold Lighthouse was born in a village."
    assert lexical_score(QUESTION, echo, TOLLAN.text) == 0.0
    assert lexical_score(QUESTION, "1871", TOLLAN.text) == 0.0
    assert lexical_score("When was the Wrenhold Lighthouse built?", "1871", TOLLAN.text) == 1.0
    assert lexical_score("How many lighthouses did Tollan build?", "1871", TOLLAN.text) == 1.0
    # a choice the question offers is answered with its own words, and checked
    choice = "Was the Wrenhold Lighthouse built by Emrik Tollan or by Orlen?"
    assert lexical_score(choice, "Emrik Tollan", TOLLAN.text) == 1.0
    assert lexical_score(choice, "Emrik Tollan", HERRING.text) == 0.0


def test_a_checker_file_is_read_and_its_verdicts_recorded(tmp_path):
    """The checker's mechanics on real MiniLM weights: a file as `ragteam train support` writes
    it (here an untrained head; its quality is measured in docs/benchmarks.md section 25, not
    here) is loaded, reads every pair, and the trace names it."""
    from ragteam.support.checker import pair_model
    from ragteam.support.training.checker import _save

    path = tmp_path / "checker.safetensors"
    _save(pair_model(), 2, path, {"threshold": 0.0})  # threshold 0: every pair it reads backs
    trace = Trace()
    settings = SupportSettings("checker", str(path))
    found = check_support(QUESTION, "Hevik. It is on Fenna.", [HERRING, TOLLAN], settings, trace)
    assert found.layer == "checker" and found.threshold == 0.0
    assert all(s.supported for s in found.sentences) and set(found.cited) == {
        "halvard-05",
        "halvard-09",
    }
    step = trace.steps[-1]
    assert step.kind == "support" and step.output["checker"].startswith("checker.safetensors:")
    assert all(0.0 <= s.score <= 1.0 for s in found.sentences)


def test_a_missing_or_corrupt_checker_falls_back_to_lexical_and_says_so(tmp_path):
    missing = SupportSettings("checker", str(tmp_path / "nope.safetensors"))
    trace = Trace()
    found = check_support(QUESTION, "Hevik", [TOLLAN], missing, trace)
    assert found.layer == "lexical" and found.cited == ["halvard-05"]
    assert "lexical layer alone" in trace.steps[-1].meta["note"]
    corrupt = tmp_path / "bad.safetensors"
    corrupt.write_bytes(b"\x00garbage" * 10)
    found = check_support(QUESTION, "Hevik", [TOLLAN], SupportSettings("checker", str(corrupt)))
    assert found.layer == "lexical" and "unreadable" in found.note
    with pytest.raises(InputError, match="checker, lexical, llm, reader, off"):
        support_settings("nli")


def test_bad_input_empty_passages_and_a_fifty_one_sentence_answer():
    blank = Passage("blank", "", "   ")
    found = check_support(QUESTION, "Hevik", [blank], SupportSettings("lexical"))
    assert found.read == () and not found.sentences[0].supported
    long = " ".join(f"Sentence number {n} is here." for n in range(MAX_SENTENCES + 1))
    found = check_support(QUESTION, long, [TOLLAN], SupportSettings("lexical"))
    assert len(found.sentences) == MAX_SENTENCES and "first 50 of 51" in found.note
    assert check_support(QUESTION, "", [TOLLAN], SupportSettings("lexical")).sentences == ()


def _oner(reply: str) -> FakeModel:
    return FakeModel(lambda messages, params: reply)


def test_an_answer_cites_only_what_supports_it(bm25_index_dir):
    result = answer(
        QUESTION,
        index=bm25_index_dir,
        strategy="oner",
        model=_oner("So the answer is: Hevik"),
        support="lexical",
    )
    assert result.text.endswith("Hevik")
    assert [c.passage_id for c in result.citations] == ["halvard-05"]
    assert len(result.read) >= 3 and result.grounding().level == "supported"
    assert result.marked_text() == f"{result.text} [1]"


def test_a_chosen_option_is_checked_as_its_text_and_marked_after_its_label(bm25_index_dir):
    """The support record keeps the text it checked (the option's), so the marks follow the
    label and no sentence offset is read against the label itself."""
    choices = {"A": "Barcelona", "B": "Hevik"}
    result = answer(
        QUESTION,
        index=bm25_index_dir,
        strategy="oner",
        model=_oner("B"),
        choices=choices,
        support="lexical",
    )
    assert result.text == "B" and result.support.checked == "Hevik"
    assert result.citations and result.grounding().level == "supported"
    marks = "".join(f"[{n}]" for n in range(1, len(result.citations) + 1))
    assert result.marked_text() == f"B {marks}"


def test_an_invented_answer_is_not_supported_and_can_be_withheld(bm25_index_dir):
    invented = _oner("So the answer is: Barcelona")
    result = answer(
        QUESTION,
        index=bm25_index_dir,
        strategy="oner",
        model=invented,
        support="lexical",
    )
    assert result.citations == [] and result.grounding().level == "not_supported"
    withheld = answer(
        QUESTION,
        index=bm25_index_dir,
        strategy="oner",
        model=invented,
        support="lexical",
        abstain=True,
    )
    assert withheld.text.startswith("I could not find this in your documents.")
    assert QUESTION in withheld.text  # what was searched
    read = len(withheld.support.read)
    assert f"({read} passages read" in withheld.text  # the count the label says
    said = withheld.grounding()  # the withheld guess is not shown as the answer's sentence
    assert said.unsupported == [] and said.message.startswith("withheld: none of the 5")
    assert withheld.support.withheld and not result.support.withheld
    notes = [s for s in withheld.trace.steps if s.meta.get("event") == "abstained"]
    assert notes and "Barcelona" in notes[0].output


def test_without_retrieval_there_is_no_evidence():
    result = answer("Who built the lighthouse?", strategy="nor", model=_oner("Emrik Tollan"))
    assert result.support is None and result.grounding().level == "no_evidence"


def test_train_support_writes_a_checker_the_stage_reads(tmp_path):
    """`ragteam train support` on a tiny training folder (the layout of shared/data/train):
    the file it writes loads, carries its validation threshold, and checks answers."""
    import json

    from typer.testing import CliRunner

    from ragteam.cli import app

    data = tmp_path / "train"
    (data / "formats").mkdir(parents=True)
    rows = [
        {
            "id": f"row{i}",
            "question": f"Where was the sailor number {i} born?",
            "answers": [f"Town{i}"],
            "context": [
                {"title": f"Sailor {i}", "sentences": [f"The sailor {i} was born in Town{i}."]},
                {"title": f"Harbour {i}", "sentences": ["The harbour has three piers."]},
            ],
            "supporting_facts": [[f"Sailor {i}", 0]],
        }
        for i in range(40)
    ]
    (data / "hotpotqa_train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    for name in (
        "musique_train.jsonl",
        "formats/claims_train.jsonl",
        "formats/multiple_choice_train.jsonl",
    ):
        (data / name).write_text("")
    out = tmp_path / "checker.safetensors"
    result = CliRunner().invoke(
        app,
        [
            "train",
            "support",
            "--data",
            str(data),
            "--out",
            str(out),
            "--epochs",
            "0.5",
            "--layers",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and out.is_file() and out.with_suffix(".json").is_file()
    found = check_support(QUESTION, "Hevik", [TOLLAN], SupportSettings("checker", str(out)))
    assert found.layer == "checker" and found.extra["checker"].startswith("checker.safetensors:")


def test_support_off_checks_nothing_and_the_label_says_unchecked(bm25_index_dir):
    result = answer(
        QUESTION,
        index=bm25_index_dir,
        strategy="oner",
        model=_oner("Barcelona"),
        support="off",
    )
    assert result.support is None and result.read == []
    assert result.grounding().level == "unchecked"
    assert all(s.kind != "support" for s in result.trace.steps)


def test_support_checks_what_the_retrievals_handed_the_team_not_what_the_trace_says(
    bm25_index_dir,
):
    """The passages an answer is checked against are collected as the team searches
    (`Context.retrieved`): a trace that is cut, replaced or rewritten changes nothing."""
    from ragteam.asking.posed import run_posed
    from ragteam.retrieval import load_index, retrieve_traced
    from ragteam.strategies.base import Context
    from ragteam.types import Answer

    class Searches:
        name, needs_index, roles = "searches", True, ()

        def run(self, posed, ctx):
            question = posed.stem
            found = retrieve_traced(ctx.index, ctx.trace, ctx.retrieved, "retriever", question, 3)
            ctx.trace.steps.clear()  # nothing of the search is left in the trace
            assert found
            return Answer(question, "Emrik Tollan was born in Hevik.", self.name, [], ctx.trace)

    index = load_index(bm25_index_dir)
    ctx = Context(FakeModel([]), index, Trace())
    result = run_posed(Searches(), QUESTION, ctx, AskRequest(support="lexical"))
    ids = [p.id for p in index.retrieve(QUESTION, 3)]
    assert sorted(c.passage_id for c in result.read) == sorted(ids)  # every one checked
    assert result.citations  # the sentence is found in a passage the search handed over


@pytest.mark.parametrize("answerable", [True, False])
def test_abstention_on_a_reader_span_is_the_answerability_heads_to_decide(
    bm25_index_dir, answerable
):
    """`--abstain` withholds a span the reader found only when its answerability head said the
    passages hold no answer; a span it found but is not sure of is shown, not labelled
    supported, and says where it was found."""
    from ragteam.asking.posed import run_posed
    from ragteam.retrieval import load_index, retrieve_traced
    from ragteam.strategies.base import Context
    from ragteam.types import Answer, Citation, Evidence, Span

    class Spans:
        name, needs_index, roles = "spans", True, ()

        def run(self, posed, ctx):
            question = posed.stem
            found = retrieve_traced(ctx.index, ctx.trace, ctx.retrieved, "retriever", question, 3)
            best = next(p for p in found if p.id == TOLLAN.id)
            at = best.text.index("1809")
            sentence = best.text.index("He died")
            read = Span(best.id, at, at + 4, "1809", best.text[sentence:], sentence, 0.4)
            said = Evidence(read, None, 0.01, answerable, "halvard.txt")
            return Answer(question, "1809", self.name, [Citation.of(best)], ctx.trace,
                          evidence=[said])  # fmt: skip

    ctx = Context(FakeModel([]), load_index(bm25_index_dir), Trace())
    result = run_posed(Spans(), QUESTION, ctx, AskRequest(support="reader", abstain=True))
    said = result.grounding()
    assert said.level == "not_supported" and result.citations == []
    if answerable:
        assert result.text == "1809" and not result.support.withheld
        assert said.found_at == "halvard.txt" and said.message.startswith("found in halvard.txt")
        assert said.unsupported == []  # found, not unbacked: the message says how sure
    else:
        assert result.support.withheld and result.text.startswith("I could not find this")
        assert said.found_at == "" and said.message.startswith("withheld")
