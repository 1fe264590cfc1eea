"""Any OpenAI-compatible chat endpoint: vLLM, Ollama, llama.cpp's server, OpenAI."""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any, Literal, get_args

import httpx

from ragteam.errors import ModelError, ServerUnreachable
from ragteam.llm.base import Completion, Request, TextRequest, estimate_tokens
from ragteam.trace import TextSink

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
log = logging.getLogger(__name__)
SchemaStyle = Literal["auto", "json_schema", "json_object"]


class RequestRejected(ModelError):
    """The server refused the request itself (HTTP 4xx other than 408/409/429)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class OpenAICompatModel:
    """Chat completions over HTTP. Calls may run concurrently (`parallel = True`).

    `schema_style`: "json_schema" sends OpenAI's `{"type": "json_schema", ...}` (vLLM, OpenAI,
    Ollama); "json_object" sends `{"type": "json_object", "schema": ...}` (llama-cpp-python's
    server); "auto" starts with the first and switches for good to the second when the server
    rejects it.
    """

    parallel = True
    streams = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "http://127.0.0.1:8000/v1",
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 120.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        context_length: int = 8192,
        schema_style: SchemaStyle = "auto",
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ModelError(
                f"--base-url {base_url!r} must start with http:// or https:// "
                "(e.g. http://127.0.0.1:8000/v1)"
            )
        if timeout <= 0 or max_retries < 0:
            raise ModelError("--timeout must be positive and --retries at least 0")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.identity = f"openai:{self.base_url}:{model}"
        self.context_length = context_length
        self.max_retries = max_retries
        self.backoff = backoff
        self.timeout = timeout  # a deadline for a whole reply, not only for each read
        if schema_style not in get_args(SchemaStyle):
            raise ModelError(
                f"unknown schema style '{schema_style}'; choose {', '.join(get_args(SchemaStyle))}"
            )
        self.schema_style = schema_style
        key = os.environ.get(api_key_env, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        try:
            self._client = httpx.Client(
                base_url=self.base_url, headers=headers, timeout=timeout, transport=transport
            )
        except httpx.InvalidURL as exc:
            raise ModelError(f"--base-url {base_url!r} is not a valid URL ({exc})") from exc

    def complete(self, request: Request, on_text: TextSink | None = None) -> Completion:
        messages = list(request.messages)
        body = self._body({"messages": messages}, request, on_text)
        if request.logit_bias:
            body["logit_bias"] = {str(t): b for t, b in request.logit_bias.items()}
        started = time.perf_counter()
        data = self._post_chat(body, request.json_schema, on_text)
        sent = "\n".join(m["content"] for m in messages)
        return self._completion(data, lambda c: c["message"].get("content"), sent, started)

    def complete_text(self, request: TextRequest, on_text: TextSink | None = None) -> Completion:
        """Raw-text continuation through `/completions` (vLLM, llama.cpp's server). A GBNF
        `grammar` is sent as llama.cpp's server takes it (the `grammar` field), a logit bias
        as OpenAI's (token ids as strings)."""
        body = self._body({"prompt": request.prompt}, request, on_text)
        if request.grammar is not None:
            body["grammar"] = request.grammar
        if request.logit_bias:
            body["logit_bias"] = {str(t): b for t, b in request.logit_bias.items()}
        started = time.perf_counter()
        data = self._post("/completions", body, on_text)
        return self._completion(data, lambda c: c.get("text"), request.prompt, started)

    def _body(
        self, content: dict[str, Any], request: Request | TextRequest, on_text: TextSink | None
    ) -> dict[str, Any]:
        body = {"model": self.model, **content, "max_tokens": request.max_tokens}
        body["temperature"] = request.temperature
        if on_text is not None:  # server-sent events, with the token counts at the end
            body.update(stream=True, stream_options={"include_usage": True})
        return {**body, "stop": list(request.stop)} if request.stop else body

    def _completion(
        self, data: dict[str, Any], text_of: Any, sent: str, started: float
    ) -> Completion:
        """The reply's text and token counts (estimated where the server gives none)."""
        try:
            text = text_of(data["choices"][0]) or ""
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ModelError(
                f"{self.base_url} sent a reply without choices: {data!r:.300}"
            ) from exc
        usage = data.get("usage") or {}
        return Completion(
            text,
            usage.get("prompt_tokens") or estimate_tokens(sent),
            usage.get("completion_tokens") or estimate_tokens(text),
            time.perf_counter() - started,
        )

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def close(self) -> None:
        self._client.close()

    def _post_chat(
        self, body: dict[str, Any], schema: dict[str, Any] | None, on_text: TextSink | None
    ) -> dict[str, Any]:
        if schema is None:
            return self._post("/chat/completions", body, on_text)
        try:
            return self._post(
                "/chat/completions", {**body, "response_format": self._format(schema)}, on_text
            )
        except RequestRejected as exc:
            if self.schema_style != "auto" or exc.status not in (400, 422, 500):
                raise
            self.schema_style = "json_object"
            return self._post(
                "/chat/completions", {**body, "response_format": self._format(schema)}, on_text
            )

    def _format(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self.schema_style == "json_object":
            return {"type": "json_object", "schema": schema}
        return {
            "type": "json_schema",
            "json_schema": {"name": "reply", "schema": schema, "strict": True},
        }

    def _post(
        self, path: str, body: dict[str, Any], on_text: TextSink | None = None
    ) -> dict[str, Any]:
        last: str = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                wait = self.backoff * 2 ** (attempt - 1)
                log.warning(
                    "%s%s: %s; retry %d of %d in %.1f s",
                    self.base_url,
                    path,
                    last,
                    attempt,
                    self.max_retries,
                    wait,
                )
                time.sleep(wait)
            try:
                response = self._send(path, body, on_text)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                last = f"connection failed: {exc}"
                continue
            except httpx.TimeoutException as exc:
                last = f"timed out: {exc}"
                continue
            if response.status_code in RETRY_STATUS and not _names_response_format(response):
                last = f"HTTP {response.status_code}: {response.text[:200]}"
                continue
            if response.status_code >= 400:
                raise RequestRejected(
                    f"{self.base_url}{path} answered HTTP {response.status_code}: "
                    f"{response.text[:300]}. Check the model name and the request options.",
                    response.status_code,
                )
            try:
                data = response.json()
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise ModelError(
                    f"{self.base_url}{path} answered HTTP {response.status_code} with a body "
                    f"that is not JSON: {response.text[:200]!r}. Is --base-url the API root "
                    "(ending in /v1)?"
                ) from None
            if not isinstance(data, dict):
                raise ModelError(f"{self.base_url}{path} answered {data!r:.200}, not an object")
            return data
        if last.startswith("connection failed"):
            raise ServerUnreachable(
                f"no OpenAI-compatible server answers at {self.base_url} ({last}). Start the "
                "server (e.g. `python -m llama_cpp.server --model FILE.gguf`) or fix --base-url."
            )
        raise ModelError(
            f"{self.base_url}{path} failed after {self.max_retries + 1} attempts ({last})"
        )

    def _send(
        self, path: str, body: dict[str, Any], on_text: TextSink | None = None
    ) -> httpx.Response:
        """POST and read the whole reply within `timeout` seconds in all: a server that
        trickles bytes (each read within the per-read timeout) still cannot hold a call open.
        A streamed reply (`on_text`) is read event by event and returned as one reply."""
        deadline = time.monotonic() + self.timeout
        with self._client.stream("POST", path, json=body) as response:
            if on_text is not None and response.status_code == 200 and _is_event_stream(response):
                return _read_events(response, on_text, deadline, self.timeout)
            chunks = []
            for chunk in response.iter_bytes():  # decoded (gzip...) as it arrives
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout(f"no complete reply within {self.timeout:g} s")
            headers = {k: v for k, v in response.headers.items() if k.lower() != "content-encoding"}
            return httpx.Response(response.status_code, headers=headers, content=b"".join(chunks))


def _is_event_stream(response: httpx.Response) -> bool:
    return response.headers.get("content-type", "").startswith("text/event-stream")


def _read_events(
    response: httpx.Response, on_text: TextSink, deadline: float, timeout: float
) -> httpx.Response:
    """An OpenAI event stream, reported as it arrives, then given back as the one reply
    (`choices[0]` with the whole text as `message.content` and `text`, and `usage` when the
    server sent it)."""
    text, tokens, usage = "", 0, None
    for line in response.iter_lines():
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout(f"no complete reply within {timeout:g} s")
        if not line.startswith("data:"):
            continue
        payload = line[len("data:") :].strip()
        if payload == "[DONE]":
            break
        try:
            event = json.loads(payload)
        except json.JSONDecodeError:
            raise ModelError(
                f"the server sent an event that is not JSON: {payload[:200]!r}"
            ) from None
        if not isinstance(event, dict):
            continue
        usage = event.get("usage") or usage
        for choice in event.get("choices") or []:
            piece = (choice.get("delta") or {}).get("content") or choice.get("text") or ""
            if piece:
                text, tokens = text + piece, tokens + 1
                on_text(text, tokens)
    reply = {"choices": [{"message": {"content": text}, "text": text}], "usage": usage}
    return httpx.Response(200, json=reply)


def _names_response_format(response: httpx.Response) -> bool:
    """Some servers (llama-cpp-python's) answer a request they cannot validate with HTTP 500;
    an error that names `response_format` is about the request, not a passing fault."""
    return response.status_code >= 500 and "response_format" in response.text
