"""Prompt templates shipped as package data.

A template file holds chat turns, each opened by a line `### system`, `### user` or
`### assistant`; `{name}` slots are filled by `fill`.
"""

from __future__ import annotations

import functools
import re
from importlib import resources

from ragteam.errors import RagteamError
from ragteam.llm.base import Message

ROLES = ("system", "user", "assistant")


@functools.cache
def load_prompt(name: str) -> tuple[tuple[str, str], ...]:
    try:
        text = resources.files("ragteam.prompts").joinpath(f"{name}.txt").read_text("utf-8")
    except FileNotFoundError as exc:
        raise RagteamError(
            f"no prompt template '{name}' in ragteam/prompts; reinstall ragteam"
        ) from exc
    return parse_template(text)


def parse_template(text: str) -> tuple[tuple[str, str], ...]:
    """The (role, body) turns of a template's text."""
    turns: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("### ") and line[4:].strip() in ROLES:
            turns.append((line[4:].strip(), []))
        elif turns:
            turns[-1][1].append(line)
    return tuple((role, "\n".join(lines).strip()) for role, lines in turns)


_SLOT = re.compile(r"\{([a-z_]+)\}")


def fill(turns: tuple[tuple[str, str], ...], **values: str) -> list[Message]:
    """Fill the `{slot}`s named in `values` in one pass; other braces (JSON examples) stay as
    they are, and text inside the values is never treated as a slot."""
    return [
        {"role": role, "content": _SLOT.sub(lambda m: values.get(m.group(1), m.group(0)), body)}
        for role, body in turns
    ]


def template_slots(turns: tuple[tuple[str, str], ...]) -> frozenset[str]:
    """The `{slot}` names of a template's turns."""
    return frozenset(name for _, body in turns for name in _SLOT.findall(body))
