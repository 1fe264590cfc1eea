"""What of a reply being written is the answer so far: one view per reply format, given to the
roles that write a strategy's answer (`Role.view`) so that a person sees it grow.

A view is a function of the reply so far. It only ever grows as the reply grows, and on the
finished reply it gives what the strategy makes of that reply (`clean_answer` for plain text),
so a client can send each new part as it comes: it holds back what could still change (an
"Answer:" prefix being written, a closing quote or final period, a half-written escape).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

_PREFIX = re.compile(r"^\s*(the\s+)?(final\s+)?answer\s*(is)?\s*[:\-]\s*", re.IGNORECASE)
_TRAILING = ".\"'`* \t"


def clean_answer(text: str) -> str:
    """The short answer from a model's reply: first non-empty line, no 'Answer:' prefix, no
    surrounding quotes or final period."""
    line = next((ln.strip() for ln in text.strip().splitlines() if ln.strip()), "")
    line = _PREFIX.sub("", line).strip().strip("\"'`*").strip()
    return line[:-1].strip() if line.endswith(".") and not line.endswith("..") else line


def text_answer(text: str) -> str:
    """The plain-text answer so far (the view of `clean_answer`)."""
    body = text.lstrip()
    if "\n" in body:  # the first line is complete
        return clean_answer(body)
    if _could_be_prefix(body):
        return ""
    line = _PREFIX.sub("", body).lstrip("\"'`* \t")
    return line.rstrip(_TRAILING)


def _could_be_prefix(line: str) -> bool:
    """Whether `line` may still grow into an "Answer:" prefix (wait before showing it)."""
    said = " ".join(line.lower().split())
    return bool(said) and any(form.startswith(said) for form in _PREFIX_FORMS)


_PREFIX_FORMS = tuple(
    f"{the}{final}answer{is_}{sep}"
    for the in ("", "the ")
    for final in ("", "final ")
    for is_ in ("", " is")
    for sep in (":", " -", "-")
)


def after(marker: str) -> Callable[[str], str]:
    """The plain-text answer after `marker` (case-insensitive), e.g. IRCoT's "So the answer is:";
    nothing before the marker is written."""
    pattern = re.compile(re.escape(marker) + r"\s*:?\s*", re.IGNORECASE)

    def view(text: str) -> str:
        found = pattern.search(text)
        return text_answer(text[found.end() :]) if found else ""

    return view


def json_field(name: str) -> Callable[[str], str]:
    """The string value of the top-level JSON field `name` as far as it is written."""
    opening = re.compile(r'"' + re.escape(name) + r'"\s*:\s*"')

    def view(text: str) -> str:
        found = opening.search(text)
        return _partial_string(text[found.end() :]).strip() if found else ""

    return view


def _partial_string(rest: str) -> str:
    """A JSON string body up to its closing quote or to the last complete character."""
    out: list[str] = []
    at = 0
    while at < len(rest):
        char = rest[at]
        if char == '"':
            break
        if char != "\\":
            out.append(char)
            at += 1
            continue
        size = 6 if rest[at + 1 : at + 2] == "u" else 2
        if at + size > len(rest):
            break  # an escape still being written
        try:
            out.append(json.loads(f'"{rest[at : at + size]}"'))
        except json.JSONDecodeError:
            break
        at += size
    return "".join(out)


def before(marker: str) -> Callable[[str], str]:
    """The text before `marker` (SMART's generator writes `answer\\n[Cite]: [1]`), holding back
    an end that may be the marker's beginning."""

    def view(text: str) -> str:
        head = text.split(marker, 1)[0]
        for size in range(min(len(marker), len(head)), 0, -1):
            if head.endswith(marker[:size]):
                head = head[:-size]
                break
        return head.strip()

    return view
