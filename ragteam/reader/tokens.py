"""Questions whose answer is a code token: "which option", "what command", "which file",
"what line do I put in my preamble". The answer is then a token written as code (`-nostdin`,
`\\DisableLigatures`, `typing.MutableMapping`, `/usr/share/doc/x/README.Debian.gz`), not the
prose around it the reader may rank first. When the reader's answer holds no code token the
question does not hold itself, the answer is the first such token among its best spans, in
their order. A rule on the question's grammar and the token's shape, no threshold: the answer
keeps the score of the span it stands in (chosen on the manuals set, docs/benchmarks.md §61)."""

from __future__ import annotations

import re
from dataclasses import replace

from ragteam.reader.spans import Reading, Span

SPANS_LOOKED_AT = 12  # the reader's best spans a code token is looked for in
# the wh-word, then within four words the noun it asks for ("which shopt option", "what
# dh_strip switch", "what should the microtype configuration file ... be called")
_ASKS = re.compile(
    r"\b(?:which|what)\s+(?:[\w'.-]+\s+){0,4}?(?:options?|flags?|switch(?:es)?|commands?|"
    r"macros?|line|files?|file ?names?|variables?|settings?|functions?|utility|utilities|"
    r"programs?|keywords?|directives?|parameters?|arguments?|modules?|methods?|fields?)\b",
    re.I,
)
_WORD = re.compile(r"\S+")
_EDGES = ".,;:?()'\"`"
# an option (-x, --all), a TeX macro (\usepackage), a variable ($HOME); a path, a placeholder
# or a name with an underscore or braces; a dotted name (typing.Dict, mt-cmr.cfg), not "e.g."
_CODE = re.compile(
    r"^(?:-{1,2}[A-Za-z]|\\[A-Za-z]|\$\w)|[_{}%/]|[A-Za-z_]\w*\.[A-Za-z_]\w+|\w\(", re.ASCII
)


def asks_code(question: str) -> bool:
    """Whether the question asks which option, command, file, line, variable... it is."""
    return _ASKS.search(question) is not None


def code_tokens(text: str) -> list[tuple[int, str]]:
    """(offset, token) of each word of `text` written as code, its edge punctuation left off."""
    found = []
    for m in _WORD.finditer(text):
        word = m.group().strip(_EDGES)
        if word and re.search(r"[A-Za-z]", word) and _CODE.search(word):
            found.append((m.start() + m.group().index(word), word))
    return found


def code_answer(question: str, reading: Reading, said: Span | None = None) -> Span | None:
    """For a question asking for a code token, when the answer so far (`said`, else the
    reader's best span) holds none the question does not hold, the first such token of the
    reader's next best spans, as a span of its own; None when the question asks for no code
    token, when the answer so far already holds one (its extent is the reader's: a command
    with its arguments, `--directory DIR`), or when no span holds one."""
    if not asks_code(question):
        return None
    asked = {w.lower() for w in _WORD.findall(question)}
    asked |= {t.lower() for _, t in code_tokens(question)}

    def new_tokens(span: Span) -> list[tuple[int, str]]:
        return [(at, t) for at, t in code_tokens(span.text) if t.lower() not in asked]

    first = said if said is not None else reading.best
    if first is None or first.kind != "span" or new_tokens(first):
        return None
    for span in [s for s in reading.spans if s.kind == "span"][:SPANS_LOOKED_AT]:
        if found := new_tokens(span):
            at, token = found[0]
            start = span.start + at
            return replace(span, start=start, end=start + len(token), text=token)
    return None
