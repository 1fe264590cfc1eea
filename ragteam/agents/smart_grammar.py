"""GBNF grammars for the trajectory agent. The locator's: the only text it may write is SMART's
locator format, every shown passage judged once, in order, and every fact line a sentence
copied from its passage. The generator's (open questions, `answer_grammar`): a span of a
located fact or yes/no, and a citation of its passages.

Free decoding lets a 135M model "recall" a fact from pre-training instead of copying it (a
paraphrased sentence, a wrong year): the judgement is then dropped as invented and the passage
lost. Under the grammar the model still chooses, token by token, between `[Relevant]` and
`[Irrelevant]` and among the passage's sentences; it can no longer write anything else.
"""

from __future__ import annotations

from ragteam.agents.smart import sentences
from ragteam.agents.smart_format import CITE, EOG, EOL, IRRELEVANT, NO_FACTS, RELEVANT

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


def answer_grammar(facts: list[tuple[int, str]], end: str = EOG) -> str:
    """The grammar of a generator output for an open question over the located `facts`
    ((passage number, fact text)): the answer is yes/no or a run of consecutive words of one
    fact, then SMART's `[Cite]:` line naming some of those passages, then `end`.

    A 135M generator shown the right fact still writes a span of another, or a name it
    recalls (docs/benchmarks.md section 21a); under this grammar it only chooses where the
    span starts and stops."""
    rules = [
        f'root ::= answer "\\n{CITE}: " cite (" " cite)* {literal(end)}',
        'answer ::= "yes" | "no" | "Yes" | "No"',
        "cite ::= " + " | ".join(literal(f"[{n}]") for n, _ in facts),
    ]
    for f, (_, fact) in enumerate(facts):
        words = fact.split()
        rules[1] += "".join(f" | f{f}s{i}" for i in range(len(words)))
        for i, word in enumerate(words):
            rules += _span_rules(f"f{f}", i, word, last=i + 1 == len(words))
    return "\n".join(rules) + "\n"


_EDGE = "\"'()[],.;:!?"


def _span_rules(name: str, i: int, word: str, last: bool) -> list[str]:
    """Word `i` of a span: `{name}w{i}` continues it, `{name}s{i}` starts one here; either
    may drop the word's closing punctuation when the span ends on it, and a span may start
    without the word's opening quote or bracket."""
    more = "" if last else f' (" " {name}w{i + 1})?'
    bare_end = word.rstrip(_EDGE)
    ending = f" | {literal(bare_end)}" if bare_end and bare_end != word else ""
    body = f"{literal(word)}{more}{ending}"
    start = word.lstrip(_EDGE)
    opening = ""
    if start and start != word:
        opening = f" | {literal(start)}{more}"
        if start.rstrip(_EDGE) and start.rstrip(_EDGE) != start:
            opening += f" | {literal(start.rstrip(_EDGE))}"
    return [f"{name}w{i} ::= {body}", f"{name}s{i} ::= {name}w{i}{opening}"]
