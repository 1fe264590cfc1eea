"""`ragteam serve` as an OpenAI-compatible chat server, driven by the official `openai` client
over HTTP on 127.0.0.1: model listing, plain and streamed completions with the agent steps in the
extension field, the conversation history, and errors in OpenAI's shape."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
openai = pytest.importorskip("openai")
from conftest import serving  # noqa: E402

from ragteam.llm import FakeModel  # noqa: E402
from ragteam.server import ServerConfig, create_app  # noqa: E402

QUESTION = "In which village was the engineer who built the Wrenhold Lighthouse born?"


@pytest.fixture(scope="module")
def seen():
    return []


@pytest.fixture(scope="module")
def told():
    return []  # each call's system turn


@pytest.fixture(scope="module")
def temperatures():
    return []  # each call's sampling temperature


@pytest.fixture(scope="module")
def client(bm25_index_dir, seen, told, temperatures):
    def reply(messages, params):
        seen.append(messages[-1]["content"])
        told.append(messages[0]["content"] if messages[0]["role"] == "system" else "")
        temperatures.append(params.get("temperature"))
        return "Hevik"

    config = ServerConfig(indexes={"demo": bm25_index_dir}, api_key="secret")
    with serving(create_app(config, FakeModel(reply))) as port:
        yield openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="secret", max_retries=0)


def test_a_read_answer_counts_what_the_reader_read_in_usage(client):
    """Issue 69: `usage` was always 0 for `read` (no model call): it counts the tokens the
    span reader read, which grow with the passages read."""
    done = client.chat.completions.create(
        model="read@demo", messages=[{"role": "user", "content": QUESTION}]
    )
    assert done.choices[0].message.content.strip()
    assert done.usage.prompt_tokens > 100 and done.usage.completion_tokens == 0
    assert done.usage.total_tokens == done.usage.prompt_tokens


def test_models_list_one_per_strategy_and_index(client):
    ids = [m.id for m in client.models.list()]
    assert "oner@demo" in ids and "smart@demo" in ids and "oner" in ids


def test_a_plain_completion_answers_with_sources_and_usage(client):
    done = client.chat.completions.create(
        model="oner@demo", messages=[{"role": "user", "content": QUESTION}]
    )
    text = done.choices[0].message.content
    assert text.startswith("Hevik") and "Sources:\n[1] " in text
    assert done.usage.total_tokens > 0 and done.choices[0].finish_reason == "stop"
    extension = done.model_extra["ragteam"]
    assert extension["citations"] and extension["strategy"] == "oner"
    assert [s["kind"] for s in extension["trace"]["steps"]] == ["retrieve", "llm", "support"]
    # the two-hop answer is right and backed, and the reader gives it with the confidence its
    # label asks (about 0.48 against its 0.364): cited and labelled supported (a cited answer
    # the reader would not give is amber: tests/test_browser.py)
    assert text.startswith("Hevik [1]") and extension["support"]["sure"] is True
    assert extension["grounding"]["level"] == "supported"
    assert "would not give this answer" not in text
    assert "sentences without a [n]" not in text  # every sentence here has its [n]
    assert len(extension["read"]) > len(extension["citations"])  # read is not cited


def test_an_unsupported_answer_is_flagged_in_words_or_withheld_on_request(bm25_index_dir):
    config = ServerConfig(indexes={"demo": bm25_index_dir})
    with serving(create_app(config, FakeModel(lambda m, p: "Barcelona"))) as port:
        chat = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0)
        asked = [{"role": "user", "content": QUESTION}]
        kept = chat.chat.completions.create(model="oner@demo", messages=asked)
        said = kept.choices[0].message.content
        assert said.startswith("Barcelona") and "Not supported: none of the passages" in said
        withheld = {"ragteam": {"abstain": True}}
        text = chat.chat.completions.create(model="oner@demo", messages=asked, extra_body=withheld)
        said = text.choices[0].message.content
        assert said.startswith("I could not find this in your documents.") and "Sources" not in said
        stream = chat.chat.completions.create(
            model="oner@demo", messages=asked, stream=True, extra_body=withheld
        )
        streamed = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        assert streamed.startswith("I could not find") and "Barcelona" not in streamed


def test_a_streamed_answer_arrives_as_it_is_written_then_its_sources(bm25_index_dir):
    config = ServerConfig(indexes={"demo": bm25_index_dir})
    reply = "Hevik, a fishing village on the island of Sarnby."
    with serving(create_app(config, FakeModel(lambda m, p: reply))) as port:
        chat = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0)
        asked = [{"role": "user", "content": QUESTION}]
        chunks = list(chat.chat.completions.create(model="oner", messages=asked, stream=True))
    order = []
    for c in chunks:
        extension = c.model_extra.get("ragteam") or {}
        if c.choices and c.choices[0].delta.content:
            order.append(("text", c.choices[0].delta.content))
        if "step" in extension:
            order.append((extension["step"]["kind"], None))
    texts = [t for kind, t in order if kind == "text"]
    assert len(texts) > 3  # word by word, not in one piece
    first_text = next(i for i, (kind, _) in enumerate(order) if kind == "text")
    assert first_text < order.index(("llm", None))  # before the answerer's call ended
    whole = "".join(texts)
    assert whole.startswith("Hevik, a fishing village on the island of Sarnby [")  # its [n]
    assert "Sources:\n[1] " in whole and "Revised answer" not in whole


def test_a_streamed_completion_sends_steps_then_the_text(client):
    stream = client.chat.completions.create(
        model="oner", messages=[{"role": "user", "content": QUESTION}], stream=True
    )
    chunks = list(stream)
    steps = [
        c.model_extra["ragteam"]["step"]
        for c in chunks
        if "step" in (c.model_extra.get("ragteam") or {})
    ]
    assert [s["kind"] for s in steps] == ["retrieve", "llm", "support"]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith("Hevik")
    assert chunks[-1].choices[0].finish_reason == "stop" and chunks[-1].usage.total_tokens > 0


def test_earlier_turns_reach_the_strategy(client, seen):
    client.chat.completions.create(
        model="nor@demo",
        messages=[
            {"role": "user", "content": "Who built the Wrenhold Lighthouse?"},
            {"role": "assistant", "content": "Emrik Tollan."},
            {"role": "user", "content": "Where was he born?"},
        ],
    )
    asked = seen[-1]
    # the earlier words a person's rewrite would carry (ragteam.followup): here the answer's name
    assert "Tollan" in asked and "Wrenhold Lighthouse" in asked and "Where was he born?" in asked


def test_errors_come_in_openai_shape(client):
    with pytest.raises(openai.NotFoundError) as info:
        client.chat.completions.create(model="magic", messages=[{"role": "user", "content": "x"}])
    assert "oner@demo" in str(info.value)
    with pytest.raises(openai.BadRequestError, match="n must be 1"):
        client.chat.completions.create(
            model="oner", n=2, messages=[{"role": "user", "content": "x"}]
        )
    with pytest.raises(openai.BadRequestError, match="tools"):
        client.chat.completions.create(
            model="oner",
            messages=[{"role": "user", "content": "x"}],
            tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}],
        )
    with pytest.raises(openai.BadRequestError, match="user message"):
        client.chat.completions.create(
            model="oner", messages=[{"role": "assistant", "content": "hello"}]
        )
    with pytest.raises(openai.BadRequestError, match="text content"):
        client.chat.completions.create(
            model="oner",
            messages=[
                {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}
            ],
        )
    with pytest.raises(openai.BadRequestError, match="cannot be set by a request"):
        client.chat.completions.create(
            model="oner",
            messages=[{"role": "user", "content": "x"}],
            extra_body={"ragteam": {"options": {"state": "/etc/passwd"}}},
        )
    with pytest.raises(openai.BadRequestError, match="abstian"):  # misspelt: refused, not ignored
        client.chat.completions.create(
            model="oner",
            messages=[{"role": "user", "content": "x"}],
            extra_body={"ragteam": {"abstian": True}},
        )
    with pytest.raises(openai.BadRequestError, match="STRATEGY@INDEX"):  # the model names it
        client.chat.completions.create(
            model="oner",
            messages=[{"role": "user", "content": "x"}],
            extra_body={"ragteam": {"index": "demo"}},
        )


def test_a_wrong_key_is_refused(client):
    wrong = client.with_options(api_key="nope")
    with pytest.raises(openai.AuthenticationError):
        wrong.chat.completions.create(model="oner", messages=[{"role": "user", "content": "x"}])


def test_a_follow_up_is_searched_with_the_earlier_question_never_the_earlier_reply(client, seen):
    first = client.chat.completions.create(
        model="oner@demo", messages=[{"role": "user", "content": QUESTION}]
    )
    reply = first.choices[0].message.content
    assert "Sources:" in reply
    turns = [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": reply},
        {"role": "user", "content": "And when was it built?"},
    ]
    done = client.chat.completions.create(model="oner@demo", messages=turns)
    talk = done.model_extra["ragteam"]["conversation"]
    carried = "village engineer Wrenhold Lighthouse born Hevik"  # never the reply's sources
    assert talk["question"] == f"And when was it built? (following: {carried})"
    assert talk["question"] in seen[-1]  # what the model was asked
    assert talk["follows"] == carried and talk["earlier_turns"] == 2
    searched = [s for s in done.model_extra["ragteam"]["trace"]["steps"] if s["kind"] == "retrieve"]
    assert "Wrenhold Lighthouse" in searched[0]["input"]["query"]
    fresh = [*turns[:2], {"role": "user", "content": "Who wrote the Hevik saga?"}]
    done = client.chat.completions.create(model="oner@demo", messages=fresh)
    assert done.model_extra["ragteam"]["conversation"]["follows"] == ""
    assert "following" not in seen[-1]


def test_usual_chat_client_settings_are_accepted_and_said(client, told, temperatures):
    asked = [{"role": "user", "content": QUESTION}]
    system = [{"role": "system", "content": "Answer like a pirate."}, *asked]
    done = client.chat.completions.create(
        model="oner", messages=system, temperature=0.7, max_tokens=2
    )
    assert done.choices[0].finish_reason == "length"
    said, _, sources = done.choices[0].message.content.partition("\n\nSources:\n")
    assert said == "Hevik" and sources.startswith("[1] ")  # 2 tokens: one word, then its sources
    notes = [
        s["output"] for s in done.model_extra["ragteam"]["trace"]["steps"] if s["kind"] == "note"
    ]
    # the system message is the answer-writing role's too (oner's answerer), and said so
    assert told[-1].endswith("Answer like a pirate.") and len(told[-1]) > 100
    assert any("Answer like a pirate." in n and "answerer" in n for n in notes)
    replied = done.model_extra["ragteam"]["notes"]  # the chat's words beside the answer
    assert not any("not applied" in n for n in notes + replied)
    # the answer's writer sampled at the asked temperature, and the trace says so
    assert temperatures[-1] == 0.7
    assert any("temperature 0.7" in n and "answerer" in n for n in notes)
    assert replied == ["reply cut to about 2 tokens, as asked"]
    assert not any("cut to about" in n for n in notes)  # the finished answer is not edited
    whole = client.chat.completions.create(model="oner", messages=asked, max_tokens=4096)
    assert (
        whole.choices[0].finish_reason == "stop" and "Sources:" in whole.choices[0].message.content
    )
    streamed = client.chat.completions.create(
        model="oner", messages=asked, max_tokens=2, stream=True
    )
    parts = list(streamed)
    text = "".join(p.choices[0].delta.content or "" for p in parts if p.choices)
    assert (
        text == done.choices[0].message.content and parts[-1].choices[0].finish_reason == "length"
    )
    client.chat.completions.create(model="oner", messages=asked, max_tokens=4096)
    assert "pirate" not in told[-1]  # not kept for the next conversation
    assert temperatures[-1] == 0.0  # nor the temperature
    read = client.chat.completions.create(model="read", messages=system, temperature=0.7)
    said = read.model_extra["ragteam"]["notes"]
    assert any("Answer like a pirate." in n and "not applied" in n for n in said)
    assert any("temperature 0.7" in n and "not used" in n for n in said)


def test_settings_a_reply_cannot_honour_are_refused_not_ignored(client):
    asked = [{"role": "user", "content": QUESTION}]
    with pytest.raises(openai.BadRequestError, match="temperature must be a number"):
        client.chat.completions.create(
            model="oner", messages=asked, extra_body={"temperature": "hot"}
        )
    with pytest.raises(openai.BadRequestError, match="max_tokens must be a whole number"):
        client.chat.completions.create(model="oner", messages=asked, max_tokens=0)
    with pytest.raises(openai.BadRequestError, match="n must be 1"):
        client.chat.completions.create(model="oner", messages=asked, n=2)


def test_only_models_that_can_answer_are_listed_with_real_times(client):
    models = client.models.list().data
    ids = [m.id for m in models]
    assert "smart" in ids and "oner@demo" in ids
    assert not any(i.startswith("adaptive") for i in ids)  # no router trained here
    assert all(m.created > 1_700_000_000 for m in models)


def test_a_body_that_is_not_utf8_or_nested_too_deeply_is_a_400(bm25_index_dir):
    import httpx

    config = ServerConfig(indexes={"demo": bm25_index_dir})
    with serving(create_app(config, FakeModel(lambda m, p: "Hevik"))) as port:
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        headers = {"content-type": "application/json"}
        for body in (b'{"model": "oner", "messages": "\xff\xfe"}', b"[" * 20_000):
            reply = httpx.post(url, content=body, headers=headers, timeout=30)
            assert reply.status_code == 400, reply.text
            assert reply.json()["error"]["code"] == "invalid_request"


def test_a_plain_completion_whose_client_leaves_stops_its_work(bm25_index_dir):
    """N1: a non-streamed chat request stops at its next step once its client has gone, as
    the answer route does (before, a marag request made all its calls for nobody)."""
    import json
    import socket
    import time

    calls = []

    def slow(messages, params):
        calls.append(1)
        time.sleep(0.3)
        return {"analysis": "a", "steps": ["a?", "b?", "c?", "d?"]}  # marag: 15 calls

    config = ServerConfig(indexes={"demo": bm25_index_dir})
    with serving(create_app(config, FakeModel(slow))) as port:
        body = json.dumps(
            {"model": "marag", "messages": [{"role": "user", "content": QUESTION}]}
        ).encode()
        head = (
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(head + body)
            deadline = time.time() + 60
            while not calls and time.time() < deadline:  # the work has begun
                time.sleep(0.05)
        # the client is gone
        time.sleep(1.5)
        settled = len(calls)
        time.sleep(1.5)
    assert 0 < settled == len(calls) <= 2  # stopped at its next step (before: 5 calls)


def test_chat_on_an_unusable_index_is_a_409_as_on_the_answer_route(tmp_path, bm25_index_dir):
    """N11r: chat answered 502 `upstream_error` where /v1/answer gives 409 for an index that is
    served but cannot be used (here: one of its files changed after the build)."""
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(bm25_index_dir, broken)
    (broken / "passages.jsonl").write_text("{}\n")
    config = ServerConfig(indexes={"demo": broken})
    with serving(create_app(config, FakeModel(lambda m, p: "Hevik"))) as port:
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0)
        with pytest.raises(openai.ConflictError) as info:
            client.chat.completions.create(
                model="oner@demo", messages=[{"role": "user", "content": "Who?"}]
            )
    assert str(tmp_path) not in str(info.value)


def test_langchains_chat_openai_works_with_its_defaults(client):
    """LangChain's ChatOpenAI as a user sets it up (its own defaults for temperature, retries,
    streaming), with a system prompt as Open WebUI-style apps send: it answers, plain and
    streamed."""
    chat_openai = pytest.importorskip("langchain_openai").ChatOpenAI
    from langchain_core.messages import HumanMessage, SystemMessage

    llm = chat_openai(model="oner", base_url=str(client.base_url), api_key="secret")
    said = llm.invoke([SystemMessage("You are a helpful assistant."), HumanMessage(QUESTION)])
    assert said.content.startswith("Hevik") and "Sources:" in said.content
    streamed = "".join(str(chunk.content) for chunk in llm.stream([HumanMessage(QUESTION)]))
    assert streamed.startswith("Hevik")


def test_a_huge_system_message_is_cut_and_the_prompt_still_fits_the_window(bm25_index_dir):
    """4,500 words of instructions (under the 64 KiB body limit): the answerer's prompt takes
    at most INSTRUCTION_TOKENS of them (said in the trace), and the passages give way so the
    whole prompt fits the model."""
    from ragteam.agents.role import INSTRUCTION_TOKENS
    from ragteam.llm.base import estimate_tokens

    window, prompts = 700, []

    def reply(messages, params):
        prompts.append(sum(estimate_tokens(m["content"]) + 8 for m in messages))
        return "Hevik"

    model = FakeModel(reply, context_length=window)
    config = ServerConfig(indexes={"demo": bm25_index_dir}, api_key="secret")
    with serving(create_app(config, model)) as port:
        chat = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="secret")
        long = " ".join(f"rule{n} answer briefly." for n in range(1_500))
        done = chat.chat.completions.create(
            model="oner",
            messages=[{"role": "system", "content": long}, {"role": "user", "content": QUESTION}],
        )
    assert done.choices[0].message.content.startswith("Hevik")
    assert prompts and max(prompts) + 48 <= window  # 48: the answerer's reply budget
    notes = [s["output"] for s in done.model_extra["ragteam"]["trace"]["steps"]]
    assert any(f"cut to {INSTRUCTION_TOKENS} tokens" in str(n) for n in notes)


def test_a_length_limit_cuts_the_answer_never_its_sources():
    from ragteam.server.chat_reply import SOURCES, cut_reply

    body = "Hevik [1] is the port of Orlen [2]."
    sources = "[1] ferries.pdf, p. 3 > Harbours (c1)\n[2] towns.md > Quillan > Orlen (c7)"
    text = body + SOURCES + sources
    for words in range(1, len(body.split()) + 1):
        cut, was_cut = cut_reply(text, -(-words * 4 // 3))  # the tokens that allow `words`
        said, _, listed = cut.partition(SOURCES)
        assert said == " ".join(body.split()[:words]) and listed == sources
        assert was_cut == (words < len(body.split()))
    assert cut_reply("Hevik is the port.", 2) == ("Hevik", True)  # no sources: words only
