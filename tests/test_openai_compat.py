"""The OpenAI-compatible backend: retries and errors (scripted transport), then a real
llama.cpp server on 127.0.0.1 serving the embedded GGUF."""

import json
import socket
from itertools import pairwise

import httpx
import pytest

from ragteam.errors import ModelError, ServerUnreachable
from ragteam.llm import Request, TextRequest, complete_json
from ragteam.llm.openai_compat import OpenAICompatModel
from ragteam.trace import Trace

ASK = [{"role": "user", "content": "Say hi."}]
OK = {
    "choices": [{"message": {"content": "hi"}}],
    "usage": {"prompt_tokens": 7, "completion_tokens": 1},
}


def scripted(responses, seen):
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        status, body = responses.pop(0)
        return httpx.Response(status, json=body)

    return httpx.MockTransport(handler)


def test_retries_429_and_5xx_then_succeeds():
    seen = []
    transport = scripted([(429, {}), (503, {}), (200, OK)], seen)
    model = OpenAICompatModel("m", backoff=0.0, transport=transport)
    result = model.complete(Request(ASK, max_tokens=5, stop=["\n"]))
    assert (result.text, result.prompt_tokens, result.completion_tokens) == ("hi", 7, 1)
    assert len(seen) == 3 and seen[0]["stop"] == ["\n"] and seen[0]["model"] == "m"


def test_gives_up_after_retries_with_a_clear_error():
    transport = scripted([(500, {})] * 4, [])
    model = OpenAICompatModel("m", backoff=0.0, max_retries=3, transport=transport)
    with pytest.raises(ModelError, match="after 4 attempts"):
        model.complete(Request(ASK))


def test_client_errors_are_not_retried():
    seen = []
    transport = scripted([(404, {"error": "no such model"})], seen)
    with pytest.raises(ModelError, match="HTTP 404"):
        OpenAICompatModel("m", transport=transport).complete(Request(ASK))
    assert len(seen) == 1


def test_schema_goes_out_in_either_style():
    schema = {"type": "object"}
    for style, expected in [("json_schema", "json_schema"), ("json_object", "json_object")]:
        seen = []
        model = OpenAICompatModel("m", schema_style=style, transport=scripted([(200, OK)], seen))
        model.complete(Request(ASK, json_schema=schema))
        assert seen[0]["response_format"]["type"] == expected


def test_auto_style_falls_back_to_json_object_once():
    seen = []
    transport = scripted([(422, {"detail": "bad response_format"}), (200, OK), (200, OK)], seen)
    model = OpenAICompatModel("m", transport=transport)
    model.complete(Request(ASK, json_schema={"type": "object"}))
    model.complete(Request(ASK, json_schema={"type": "object"}))
    assert [b["response_format"]["type"] for b in seen] == [
        "json_schema",
        "json_object",
        "json_object",
    ]


def test_server_down_is_reported_with_what_to_do():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = OpenAICompatModel(
        "m", base_url=f"http://127.0.0.1:{port}/v1", backoff=0.01, max_retries=1, timeout=2
    )
    with pytest.raises(ServerUnreachable, match=f"127.0.0.1:{port}.*Start the server"):
        model.complete(Request(ASK))


def test_api_key_comes_from_the_named_variable(monkeypatch):
    monkeypatch.setenv("MY_KEY", "sekret")
    headers = []

    def handler(request):
        headers.append(request.headers.get("authorization"))
        return httpx.Response(200, json=OK)

    OpenAICompatModel("m", api_key_env="MY_KEY", transport=httpx.MockTransport(handler)).complete(
        Request(ASK)
    )
    assert headers == ["Bearer sekret"]


@pytest.mark.integration
def test_real_llama_cpp_server_text_and_schema(llama_server):
    model = OpenAICompatModel("smollm2", base_url=llama_server)  # auto schema style
    result = model.complete(Request(ASK, max_tokens=8))
    assert result.text.strip() and result.prompt_tokens > 0 and result.completion_tokens > 0
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    trace = Trace()
    value = complete_json(
        model,
        trace,
        "extractor",
        [{"role": "user", "content": "Name a city as JSON."}],
        schema,
        max_tokens=40,
    )
    assert isinstance(value["city"], str)
    assert trace.steps[0].role == "extractor" and trace.steps[0].prompt_tokens > 0


@pytest.mark.integration
def test_real_llama_cpp_server_streams_the_same_reply(llama_server):
    model = OpenAICompatModel("smollm2", base_url=llama_server)
    whole = model.complete(Request(ASK, max_tokens=24))
    seen: list[tuple[str, int]] = []
    streamed = model.complete(Request(ASK, max_tokens=24), lambda text, n: seen.append((text, n)))
    assert streamed.text == whole.text and len(seen) > 3
    assert seen[-1][0] == streamed.text and [n for _, n in seen] == list(range(1, len(seen) + 1))
    assert all(later.startswith(earlier) for (earlier, _), (later, _) in pairwise(seen))
    # llama-cpp-python's server sends no usage in a stream: the counts are then estimated
    assert streamed.prompt_tokens > 0 and streamed.completion_tokens > 0
    raw: list[str] = []
    text = model.complete_text(TextRequest("The sky is", max_tokens=8), lambda t, n: raw.append(t))
    assert raw and raw[-1] == text.text


def test_a_stream_that_sends_garbage_is_a_model_error():
    def handler(request: httpx.Request) -> httpx.Response:
        body = b"data: {not json\n\n"
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    model = OpenAICompatModel("m", transport=httpx.MockTransport(handler), max_retries=0)
    with pytest.raises(ModelError, match="not JSON"):
        model.complete(Request(ASK), lambda text, n: None)


def test_a_raw_text_request_sends_its_bias_and_grammar():
    sent: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        assert request.url.path.endswith("/completions")
        return httpx.Response(200, json={"choices": [{"text": "a"}]})

    model = OpenAICompatModel("m", transport=httpx.MockTransport(handler))
    asked = TextRequest(
        "go", max_tokens=3, stop=("\n",), logit_bias={7: 2.0}, grammar='root ::= "a"'
    )
    assert model.complete_text(asked).text == "a"
    assert sent[0]["logit_bias"] == {"7": 2.0} and sent[0]["grammar"] == 'root ::= "a"'
    assert sent[0]["prompt"] == "go" and sent[0]["stop"] == ["\n"] and sent[0]["max_tokens"] == 3


def test_a_chat_request_sends_its_bias():
    sent: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json={"choices": [{"message": {"content": "True"}}]})

    model = OpenAICompatModel("m", transport=httpx.MockTransport(handler))
    assert model.complete(Request(ASK, max_tokens=3, logit_bias={7: 2.0})).text == "True"
    assert model.complete(Request(ASK, max_tokens=3)).text == "True"
    assert sent[0]["logit_bias"] == {"7": 2.0} and "logit_bias" not in sent[1]
