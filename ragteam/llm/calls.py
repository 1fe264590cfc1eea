"""Traced model calls: plain text, and JSON checked against a schema with one repair retry."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import jsonschema

from ragteam.errors import ParseError
from ragteam.llm.base import ChatModel, Completion, Message, Request, streams
from ragteam.trace import AnswerView, Step, TextSink, Trace

# Extra validation after the schema: returns an error message, or None when the value is fine.
Check = Callable[[Any], str | None]


def complete_text(
    model: ChatModel,
    trace: Trace,
    role: str,
    request: Request,
    *,
    grounded: bool = False,
    view: AnswerView | None = None,
) -> Completion:
    """One plain-text model call, recorded in the trace under `role`; `view` picks the answer
    out of a reply that writes it (for `trace.on_writing` listeners). A `grounded` reply must
    not copy the worked examples: such a reply is retried once without them, and a second
    copy raises `ParseError` for `role`."""
    messages = list(request.messages)
    attempts = (messages, without_examples(messages)) if grounded else (messages,)
    for attempt in attempts:
        asked = dataclasses.replace(request, messages=tuple(attempt)) if grounded else request
        result = _watched(model, asked, trace.writer(role, view))
        copied = copied_from_examples(result.text, messages) if grounded else []
        trace.add(_llm_step(role, attempt, result, _copy_error(copied) if copied else None))
        if not copied:
            return result
    raise ParseError(role, _copy_error(copied), result.text)


def _watched(model: ChatModel, request: Request, sink: TextSink | None) -> Completion:
    """`model.complete`, its reply reported to `sink` as it is written (in one piece at the
    end when the model cannot stream)."""
    if sink is None:
        return model.complete(request)
    result = model.complete(request, sink if streams(model) else None)
    sink(result.text, result.completion_tokens)
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
    grounded: bool = True,
    view: AnswerView | None = None,
    temperature: float = 0.0,
) -> Any:
    """Ask for JSON matching `schema`; on a bad reply, show the model the error and retry once.

    `grounded` replies must not name what only the prompt's worked examples name (small models
    copy the example when they cannot read the input); such a reply is retried once without
    the examples. After the retry fails, the failing step is recorded (with `parse_failures`)
    and `ParseError` names the role, so the strategy can fail just that step visibly.
    """
    attempt_messages = list(messages)
    for _attempt in range(2):
        asked = Request(
            attempt_messages, max_tokens=max_tokens, temperature=temperature, json_schema=schema
        )
        result = _watched(model, asked, trace.writer(role, view))
        value, error = _parse(result.text, schema, check)
        copied = copied_from_examples(result.text, messages) if grounded and not error else []
        if copied:
            error = _copy_error(copied)
        elif error is None and (echoed := echoed_placeholders(value, _system(messages))):
            error = (
                f"the reply repeats the placeholder {echoed[0]!r} of the reply template: "
                "write the actual content instead"
            )
        trace.add(_llm_step(role, attempt_messages, result, error))
        if error is None:
            return value
        attempt_messages = (
            without_examples(messages)
            if copied
            else [
                *messages,
                {"role": "assistant", "content": result.text},
                {"role": "user", "content": _repair_prompt(error, schema)},
            ]
        )
    raise ParseError(role, error or "invalid reply", result.text)


def without_examples(messages: list[Message]) -> list[Message]:
    """The system prompt and the final request, without the worked examples between them."""
    return [messages[0], messages[-1]] if len(messages) > 2 else list(messages)


def _copy_error(copied: list[str]) -> str:
    return f"the reply copies {', '.join(copied)} from the worked example, not from the request"


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


_NAME = re.compile(r"\b(?:[A-Z][\w'-]{3,}|\d{3,})")
_WORD = re.compile(r"\w+")
_COMMON = {"this", "that", "what", "which", "when", "where", "there", "they", "their", "these"}


def copied_from_examples(reply: str, messages: list[Message]) -> list[str]:
    """Names and numbers of the worked examples (the turns between the system prompt and the
    final request) that the reply repeats although neither the system prompt nor the final
    request contains them."""
    if len(messages) < 3:
        return []
    examples = " ".join(m["content"] for m in messages[1:-1])
    real = {w.lower() for m in (messages[0], messages[-1]) for w in _WORD.findall(m["content"])}
    said = {w.lower() for w in _WORD.findall(reply)}
    names = dict.fromkeys(n for n in _NAME.findall(examples) if n.lower() not in _COMMON)
    return [n for n in names if n.lower() in said and n.lower() not in real]


# a quoted value in the system prompt's JSON template: `"answer": "short answer"`, not the
# alternatives of `"success": "yes" or "no"` (those are real values)
_TEMPLATE_VALUE = re.compile(r'":\s*"([^"]{2,40})"(?!\s+or\b)')


def _system(messages: list[Message]) -> str:
    """The system prompt (where the reply template is written), or nothing."""
    return messages[0]["content"] if messages and messages[0]["role"] == "system" else ""


def echoed_placeholders(value: Any, system: str) -> list[str]:
    """Top-level string fields of a JSON reply that only repeat a worded placeholder of the
    reply template in the system prompt ("short answer", "one sentence"; "..." is no word)."""
    if not isinstance(value, dict):
        return []
    found = _TEMPLATE_VALUE.findall(system)
    placeholders = {p.strip().lower() for p in found if any(c.isalpha() for c in p)}
    return [
        v
        for v in value.values()
        if isinstance(v, str) and v.strip().lower().strip(".") in placeholders
    ]


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


def _llm_step(
    role: str, messages: Sequence[Message], result: Completion, error: str | None = None
) -> Step:
    """The trace step of one call, complete when added (listeners see its failure too)."""
    return Step(
        kind="llm",
        role=role,
        input=list(messages),
        output=result.text,
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        seconds=result.seconds,
        cached=result.cached,
        parse_failures=int(error is not None),
        error=error,
    )
