"""SMART's trajectory text format (Yue et al.): render it, and parse the authors' examples back.

Self-contained on purpose: the trajectory-learning recipe builds its training data on it.

Prompt: `<|Instruction|>:\\n{instruction}` (+ `\\n\\n<|Input|>:\\n{input}`), ending in
`</eoi>\\n\\n`.
Long trajectory (canonical form, as `render` writes it):

    <|Reconstructor|>:\\nSearch(intent 1; intent 2)</eor>\\n\\n
    <retrieval>[1] Title\\npassage text\\n[2] Title\\npassage text</retrieval>\\n\\n
    <|Locator|>:\\n[Relevant]: [1] Title\\nfact\\n
    [Irrelevant]: [2] Lacking Supporting Facts</eol>\\n\\n
    <|Generator|>:\\nanswer\\n[Cite]: [1]</eog>

The parser also accepts the variants in the released examples: `<|Locator|>` without the colon,
`<|retrieval|>` for `<retrieval>`, a fact line starting with a space, intents split by a newline,
and an empty `[Cite]:` line. No `[Cite]` line is written when nothing is relevant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ragteam.types import Judgement

EOI, EOR, EOL, EOG = "</eoi>", "</eor>", "</eol>", "</eog>"
RELEVANT, IRRELEVANT, CITE = "[Relevant]", "[Irrelevant]", "[Cite]"
RETRIEVAL_OPEN, RETRIEVAL_CLOSE = "<retrieval>", "</retrieval>"
RECONSTRUCTOR, LOCATOR, GENERATOR = "<|Reconstructor|>:\n", "<|Locator|>:\n", "<|Generator|>:\n"
NO_FACTS = "Lacking Supporting Facts"

_HEAD = r"<\|{name}\|>:?\n"
_PASSAGE = re.compile(r"^\[(\d+)\] ?(.*)$")
_JUDGEMENT = re.compile(r"^\[(Relevant|Irrelevant)\]: \[(\d+)\] ?(.*)$")


@dataclass
class Trajectory:
    intents: list[str] = field(default_factory=list)
    passages: list[tuple[str, str]] = field(default_factory=list)  # (title, text), [1]..[n]
    judgements: list[Judgement] = field(default_factory=list)
    answer: str = ""
    citations: list[int] = field(default_factory=list)


def render_prompt(instruction: str, input_text: str = "") -> str:
    if input_text:
        return f"<|Instruction|>:\n{instruction}\n\n<|Input|>:\n{input_text}{EOI}\n\n"
    return f"<|Instruction|>:\n{instruction}{EOI}\n\n"


def render_reconstructor(intents: list[str]) -> str:
    return f"{RECONSTRUCTOR}Search({'; '.join(i.strip() for i in intents)}){EOR}\n\n"


def render_retrieval(passages: list[tuple[str, str]]) -> str:
    body = "\n".join(f"[{i}] {title}\n{text}" for i, (title, text) in enumerate(passages, 1))
    return f"{RETRIEVAL_OPEN}{body}{RETRIEVAL_CLOSE}\n\n"


def render_locator(judgements: list[Judgement]) -> str:
    lines = [
        f"{RELEVANT}: [{j.index}] {j.title}\n{j.fact.strip()}"
        if j.relevant
        else f"{IRRELEVANT}: [{j.index}] {NO_FACTS}"
        for j in judgements
    ]
    return f"{LOCATOR}{chr(10).join(lines)}{EOL}\n\n"


def render_generator(answer: str, citations: list[int]) -> str:
    cite = f"\n{CITE}: " + " ".join(f"[{i}]" for i in citations) if citations else ""
    return f"{GENERATOR}{answer.strip()}{cite}{EOG}"


def render_trajectory(t: Trajectory) -> str:
    """The long trajectory in canonical form."""
    return (
        render_reconstructor(t.intents)
        + render_retrieval(t.passages)
        + render_locator(t.judgements)
        + render_generator(t.answer, t.citations)
    )


def _section(text: str, head: str, end: str) -> str | None:
    match = re.search(_HEAD.format(name=head) + r"(.*?)" + re.escape(end), text, re.DOTALL)
    return match.group(1) if match else None


def parse_intents(body: str) -> list[str]:
    inner = body.strip()
    if inner.startswith("Search(") and inner.endswith(")"):
        inner = inner[len("Search(") : -1]
    return [part.strip() for part in re.split(r";|\n", inner) if part.strip()]


def parse_retrieval(text: str) -> list[tuple[str, str]]:
    match = re.search(r"(?:<retrieval>|<\|retrieval\|>)(.*?)</retrieval>", text, re.DOTALL)
    if not match:
        return []
    passages: list[tuple[str, list[str]]] = []
    expect_title = False
    for line in match.group(1).split("\n"):
        head = _PASSAGE.match(line)
        if head and int(head.group(1)) == len(passages) + 1:
            passages.append((head.group(2).strip(), []))
            expect_title = True
        elif passages:
            passages[-1][1].append(line.strip() if expect_title else line)
            expect_title = False
    return [(title, "\n".join(body).strip()) for title, body in passages]


def parse_locator(body: str) -> list[Judgement]:
    judgements: list[Judgement] = []
    for line in body.split("\n"):
        head = _JUDGEMENT.match(line)
        if head:
            relevant = head.group(1) == "Relevant"
            title = head.group(3).strip()
            judgements.append(
                Judgement(
                    int(head.group(2)),
                    "" if not relevant and title == NO_FACTS else title,
                    relevant,
                )
            )
        elif judgements and line.strip():
            last = judgements[-1]
            last.fact = f"{last.fact}\n{line.strip()}".strip()
    return judgements


def parse_generator(body: str) -> tuple[str, list[int]]:
    answer, _, cite = body.partition(f"\n{CITE}:")
    if not _ and body.startswith(f"{CITE}:"):
        answer, cite = "", body[len(CITE) + 1 :]
    return answer.strip(), [int(n) for n in re.findall(r"\[(\d+)\]", cite)]


def parse(text: str) -> Trajectory:
    """Every stage found in `text` (a long trajectory, or a prompt plus one stage's output)."""
    t = Trajectory()
    if (body := _section(text, "Reconstructor", EOR)) is not None:
        t.intents = parse_intents(body)
    t.passages = parse_retrieval(text)
    if (body := _section(text, "Locator", EOL)) is not None:
        t.judgements = parse_locator(body)
    if (body := _section(text, "Generator", EOG)) is not None:
        t.answer, t.citations = parse_generator(body)
    return t
