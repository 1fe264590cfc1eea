"""A GBNF grammar for the trajectory locator: the only text it may write is SMART's locator
format, every shown passage judged once, in order, and every fact line a sentence copied from
its passage.

Free decoding lets a 135M model "recall" a fact from pre-training instead of copying it (a
paraphrased sentence, a wrong year): the judgement is then dropped as invented and the passage
lost. Under the grammar the model still chooses, token by token, between `[Relevant]` and
`[Irrelevant]` and among the passage's sentences; it can no longer write anything else.
"""

from __future__ import annotations

from ragteam.smart.format import EOL, IRRELEVANT, NO_FACTS, RELEVANT
from ragteam.smart.roles import sentences

MAX_FACT_LINES = 3  # training facts hold one or two gold sentences, rarely three


def literal(text: str) -> str:
    """`text` as a GBNF string literal."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return f'"{"".join(out)}"'


def fact_sentences(text: str) -> list[str]:
    """The passage's sentences as a fact line may hold them (whitespace squashed, each once)."""
    return list(dict.fromkeys(sentences(text)))


def locator_grammar(passages: list[tuple[str, str]], end: str = EOL) -> str:
    """The grammar of one locator output over `passages` ((title, text), shown as [1]..[n]),
    ending with `end` (the stop string, so that decoding stops there)."""
    rules = ["root ::= " + ' "\\n" '.join(f"j{n}" for n in range(1, len(passages) + 1))]
    rules[0] += f" {literal(end)}" if passages else literal(end)
    for n, (title, text) in enumerate(passages, start=1):
        irrelevant = literal(f"{IRRELEVANT}: [{n}] {NO_FACTS}")
        sentences = fact_sentences(text)
        if not sentences:
            rules.append(f"j{n} ::= {irrelevant}")
            continue
        relevant = literal(f"{RELEVANT}: [{n}] {title}\n")
        more = ' ("\\n" s{n})?' * (MAX_FACT_LINES - 1)
        rules.append(f"j{n} ::= {relevant} s{n}{more.format(n=n)} | {irrelevant}")
        rules.append(f"s{n} ::= " + " | ".join(literal(s) for s in sentences))
    return "\n".join(rules) + "\n"
