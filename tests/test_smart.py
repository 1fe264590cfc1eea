"""SMART's pipeline on a scripted model and a real BM25 index: every branch."""

import json

from ragteam.asking.api import answer
from ragteam.llm import FakeModel
from ragteam.retrieval import load_index
from ragteam.smart.format import parse

QUESTION = "In which village was the engineer who built the Wrenhold Lighthouse born?"


def role_of(messages):
    system = messages[0]["content"]
    for key, role in [
        ("search queries", "reconstructor"),
        ("judge whether", "locator"),
        ("from the numbered facts", "generator"),
        ("own knowledge", "direct"),
    ]:
        if key in system:
            return role
    raise AssertionError(system)


def scripted(reconstructor=None, locator=None, generator=None, direct=None):
    def reply(messages, params):
        role = role_of(messages)
        handler = {
            "reconstructor": reconstructor,
            "locator": locator,
            "generator": generator,
            "direct": direct,
        }[role]
        return handler(messages) if callable(handler) else handler

    return FakeModel(reply)


def passage_of(messages):
    request = messages[3]["content"]  # the real request (later turns are a retry's repair)
    return [ln for ln in request.splitlines() if ln.startswith("Passage:")][0]


def truthful_locator(messages):
    line = passage_of(messages)
    for fact in (
        "It was built in 1786 by the engineer Emrik Tollan.",
        "Emrik Tollan was an engineer born in 1744 in the village of Hevik on the island of "
        "Sarnby.",
    ):
        if fact in line:
            return {"relevant": True, "fact": fact}
    return {"relevant": False, "fact": ""}


def test_full_pipeline_locates_facts_and_cites(bm25_index_dir):
    model = scripted(
        reconstructor={
            "intents": [
                "builder of the Wrenhold Lighthouse",
                "birthplace of the Wrenhold Lighthouse engineer",
                "builder of the Wrenhold Lighthouse",
            ]
        },
        locator=truthful_locator,
        generator=lambda m: {
            "answer": "Hevik",
            "citations": [int(ln[1]) for ln in m[-1]["content"].splitlines() if ln.startswith("[")],
        },
    )
    # the agent's own citations: the support stage is tested in test_support
    result = answer(QUESTION, index=bm25_index_dir, strategy="smart", model=model, support="off")
    assert result.text == "Hevik"
    retrieves = [s for s in result.trace.steps if s.kind == "retrieve"]
    assert [s.input["query"] for s in retrieves] == [
        "builder of the Wrenhold Lighthouse",
        "birthplace of the Wrenhold Lighthouse engineer",
    ]
    shown = {h["id"] for s in retrieves for h in s.output}
    locator_calls = [s for s in result.trace.steps if s.role == "locator"]
    assert len(locator_calls) == len(shown)  # deduplicated across intents
    titles = {c.title for c in result.citations}
    assert titles == {"Wrenhold Lighthouse", "Emrik Tollan"}
    index = load_index(bm25_index_dir)
    assert all(c.passage_id in shown and index.passage(c.passage_id) for c in result.citations)
    generator_prompt = model.calls[-1]["messages"][-1]["content"]
    assert "It was built in 1786 by the engineer Emrik Tollan." in generator_prompt
    note = [s for s in result.trace.steps if s.role == "smart" and "trajectory" in s.meta][0]
    trajectory = parse(note.meta["trajectory"])
    assert trajectory.answer == "Hevik" and len(trajectory.intents) == 2
    assert sum(j.relevant for j in trajectory.judgements) == 2
    [facts] = [s.meta["facts"] for s in result.trace.steps if s.meta.get("event") == "facts"]
    assert result.facts == facts and result.to_dict()["facts"] == facts  # the answer's own
    assert set(facts) == {c.passage_id for c in result.citations}
    assert all(index.passage(pid).text.find(f.split("\n")[0]) >= 0 for pid, f in facts.items())


def test_invented_fact_is_rejected_and_the_passage_goes_raw(bm25_index_dir):
    model = scripted(
        reconstructor={"intents": ["Wrenhold Lighthouse builder"]},
        locator={"relevant": True, "fact": "The lighthouse was made of cheese."},
        generator={"answer": "Emrik Tollan", "citations": [1]},
    )
    result = answer(
        "Who built the Wrenhold Lighthouse?",
        index=bm25_index_dir,
        strategy="smart",
        model=model,
        options={"k": 2},
    )
    failures = result.trace.parse_failures_by_role()
    assert failures == {"locator": 4}  # 2 passages x (first try + retry)
    assert "word for word" in model.calls[2]["messages"][-1]["content"]
    notes = [s.output for s in result.trace.steps if s.kind == "note"]
    assert sum("passing it raw" in n for n in notes) == 2
    generator_prompt = model.calls[-1]["messages"][-1]["content"]
    assert "stands on the northern cape" in generator_prompt  # raw passage text
    assert result.text == "Emrik Tollan" and len(result.citations) == 1


def test_nothing_relevant_means_answering_from_the_question(bm25_index_dir):
    model = scripted(
        reconstructor={"intents": ["x"]},
        locator={"relevant": False, "fact": ""},
        direct={"answer": "no idea", "citations": []},
    )
    result = answer(QUESTION, index=bm25_index_dir, strategy="smart", model=model)
    assert result.text == "no idea" and result.citations == []
    assert role_of(model.calls[-1]["messages"]) == "direct"


def test_ablations(bm25_index_dir):
    model = scripted(
        generator={"answer": "Hevik", "citations": [2]}, direct={"answer": "Hevik", "citations": []}
    )
    result = answer(
        QUESTION,
        index=bm25_index_dir,
        strategy="smart",
        model=model,
        options={"reconstructor": False, "locator": False},
    )
    roles = [role_of(c["messages"]) for c in model.calls]
    assert roles == ["generator"]
    [searched] = [s for s in result.trace.steps if s.kind == "retrieve"]
    assert searched.input["query"] == QUESTION
    assert len(result.citations) == 1
    only = scripted(direct={"answer": "Hevik", "citations": []})
    result = answer(
        QUESTION, index=bm25_index_dir, strategy="smart", model=only, options={"retrieve": False}
    )
    assert [s.kind for s in result.trace.steps if s.kind != "note"] == ["llm"]


def test_failing_reconstructor_and_generator_degrade_visibly(bm25_index_dir):
    model = scripted(
        reconstructor="not json", locator={"relevant": False, "fact": ""}, direct="still not json"
    )
    result = answer(QUESTION, index=bm25_index_dir, strategy="smart", model=model)
    assert result.text == "" and result.citations == []
    assert result.trace.parse_failures_by_role() == {"reconstructor": 2, "generator": 2}
    notes = " ".join(s.output for s in result.trace.steps if s.kind == "note")
    assert "reconstructor failed" in notes and "generator failed" in notes
    assert [s for s in result.trace.steps if s.kind == "retrieve"][0].input["query"] == QUESTION


def test_citations_outside_the_facts_are_repaired_or_refused(bm25_index_dir):
    def generator(messages):
        if len(messages) == 4:  # first try: cite a fact that does not exist
            return {"answer": "Emrik Tollan", "citations": [42]}
        facts = messages[3]["content"]  # the real request, before the bad reply and the repair
        return {
            "answer": "Emrik Tollan",
            "citations": [int(facts.split("Facts:\n[")[1].split("]")[0])],
        }

    model = scripted(
        reconstructor={"intents": ["Wrenhold"]}, locator=truthful_locator, generator=generator
    )
    result = answer(
        "Who built the Wrenhold Lighthouse?", index=bm25_index_dir, strategy="smart", model=model
    )
    assert result.trace.parse_failures_by_role() == {"generator": 1}
    assert "not among the fact numbers" in json.dumps(model.calls[-1]["messages"])


def test_snap_facts_replaces_a_close_paraphrase_with_the_passage_sentence(bm25_index_dir):
    from ragteam.smart.roles import nearest_sentence

    text = "The lighthouse stands on the cape. It was built in 1786 by Emrik Tollan."
    assert nearest_sentence("It was built by Emrik Tollan in 1786", text) == (
        "It was built in 1786 by Emrik Tollan.",
        1.0,
    )
    paraphrase = {
        "relevant": True,
        "fact": "The Wrenhold Lighthouse was built by the engineer Emrik Tollan in 1786.",
    }
    model = scripted(
        reconstructor={"intents": ["Wrenhold Lighthouse"]},
        locator=lambda m: (
            paraphrase
            if "Wrenhold Lighthouse:" in passage_of(m)
            else {"relevant": False, "fact": ""}
        ),
        generator=lambda m: {
            "answer": "Emrik Tollan",
            "citations": [int(m[-1]["content"].split("Facts:\n[")[1].split("]")[0])],
        },
    )
    strict = answer(
        "Who built the Wrenhold Lighthouse?",
        index=bm25_index_dir,
        strategy="smart",
        model=model,
        options={"k": 2},
    )
    assert strict.trace.parse_failures_by_role() == {"locator": 2}
    snapped = answer(
        "Who built the Wrenhold Lighthouse?",
        index=bm25_index_dir,
        strategy="smart",
        model=model,
        options={"k": 2, "snap_facts": True},
    )
    assert snapped.trace.parse_failures_by_role() == {}
    [note] = [s for s in snapped.trace.steps if s.role == "locator" and s.kind == "note"]
    assert note.meta["snapped"] == "It was built in 1786 by the engineer Emrik Tollan."
    assert (
        "It was built in 1786 by the engineer Emrik Tollan."
        in model.calls[-1]["messages"][-1]["content"]
    )


def test_with_question_retrieves_with_the_question_first_and_once(bm25_index_dir):
    model = scripted(
        reconstructor={"intents": [QUESTION.upper(), "Wrenhold Lighthouse engineer birthplace"]},
        locator={"relevant": False, "fact": ""},
        direct={"answer": "Hevik", "citations": []},
    )
    result = answer(
        QUESTION,
        index=bm25_index_dir,
        strategy="smart",
        model=model,
        options={"k": 1, "with_question": True},
    )
    queries = [s.input["query"] for s in result.trace.steps if s.kind == "retrieve"]
    assert queries == [QUESTION, "Wrenhold Lighthouse engineer birthplace"]
    default = answer(
        QUESTION, index=bm25_index_dir, strategy="smart", model=model, options={"k": 1}
    )
    queries = [s.input["query"] for s in default.trace.steps if s.kind == "retrieve"]
    assert queries == [QUESTION.upper(), "Wrenhold Lighthouse engineer birthplace"]
