"""Traced model calls: plain text, and JSON checked against a schema with one repair retry."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import jsonschema

from ragteam.errors import ParseError
from ragteam.llm.base import ChatModel, Completion, Message
from ragteam.trace import Step, Trace

# Extra validation after the schema: returns an error message, or None when the value is fine.
Check = Callable[[Any], str | None]


def complete_traced(
    model: ChatModel,
    trace: Trace,
    role: str,
    messages: list[Message],
    *,
    max_tokens: int = 256,
    temperature: float = 0.0,
    stop: list[str] | None = None,
    json_schema: dict[str, Any] | None = None,
) -> Completion:
    """One model call, recorded in the trace under `role`."""
    result = model.complete(
        messages,
        max_tokens=max_tokens,
        temperature=temperature,
        stop=stop,
        json_schema=json_schema,
    )
    trace.add(_llm_step(role, messages, result))
    return result


def complete_json(
    model: ChatModel,
    trace: Trace,
    role: str,
    messages: list[Message],
    schema: dict[str, Any],
    *,
    max_tokens: int = 256,
    check: Check | None = None,
) -> Any:
    """Ask for JSON matching `schema`; on a bad reply, show the model the error and retry once.

    After the retry fails, the failing step is recorded (with `parse_failures`) and `ParseError`
    names the role, so the strategy can fail just that step visibly.
    """
    attempt_messages = list(messages)
    for _attempt in range(2):
        result = model.complete(attempt_messages, max_tokens=max_tokens, json_schema=schema)
        value, error = _parse(result.text, schema, check)
        step = trace.add(_llm_step(role, attempt_messages, result))
        if error is None:
            return value
        step.parse_failures = 1
        step.error = error
        attempt_messages = [
            *messages,
            {"role": "assistant", "content": result.text},
            {"role": "user", "content": _repair_prompt(error, schema)},
        ]
    raise ParseError(role, error or "invalid reply", result.text)


def _parse(text: str, schema: dict[str, Any], check: Check | None) -> tuple[Any, str | None]:
    try:
        value = json.loads(_strip_fences(text))
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg} at position {exc.pos})"
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "top level"
        return None, f"schema violation at {where}: {exc.message}"
    if check is not None and (problem := check(value)) is not None:
        return None, problem
    return value, None


def _strip_fences(text: str) -> str:
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    return body.strip()


def _repair_prompt(error: str, schema: dict[str, Any]) -> str:
    return (
        f"Your reply was invalid: {error}. Reply again with only a JSON value that matches "
        f"this JSON schema, and nothing else:\n{json.dumps(schema)}"
    )


def _llm_step(role: str, messages: list[Message], result: Completion) -> Step:
    return Step(
        kind="llm",
        role=role,
        input=messages,
        output=result.text,
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        seconds=result.seconds,
        cached=result.cached,
    )
