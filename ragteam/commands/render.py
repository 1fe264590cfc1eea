"""Readable terminal views of answers and traces (rich renderables; nothing is printed here)."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ragteam.common.text import visible
from ragteam.trace import Step, Trace
from ragteam.types import Answer, Evidence

_GROUNDING_STYLE = {
    "supported": "green",
    "partly_supported": "yellow",
    "not_supported": "bold yellow",
    "no_evidence": "bold yellow",
    "unchecked": "yellow",
    "failed": "bold red",
}


def answer_view(answer: Answer) -> Group:
    closest = answer.closest()
    parts: list[Any] = [
        Panel(evidence_line(closest), title=f"closest passage found ({answer.strategy})")
        if closest is not None  # not sure enough to be shown as the answer
        else Panel(Text(answer.marked_text() or "(no answer)"), title=f"answer ({answer.strategy})")
    ]
    if answer.why:
        parts.append(Text(f"why: {answer.why}"))
    if answer.evidence and closest is None:
        parts.append(Text("found in", style="bold"))
        parts += [evidence_line(e) for e in answer.evidence[:1]]
    if answer.citations:
        cites = Table(show_header=True, header_style="bold", box=None)
        cites.add_column("")
        cites.add_column("passage")
        cites.add_column("where")
        for n, c in enumerate(answer.citations, start=1):
            cites.add_row(
                f"[{n}]", escape(visible(c.passage_id)), escape(visible(c.locator or c.title))
            )
        parts.append(Text("citations", style="bold"))
        parts.append(cites)
    cited = {c.passage_id for c in answer.citations}
    if unused := [c for c in answer.read if c.passage_id not in cited]:
        shown = ", ".join(visible(c.locator or c.title or c.passage_id) for c in unused[:5])
        more = f" and {len(unused) - 5} more" if len(unused) > 5 else ""
        parts.append(Text(f"read, not cited: {shown}{more}", style="dim"))
    grounded = answer.grounding()
    parts.append(Text(grounded.message, style=_GROUNDING_STYLE[grounded.level]))
    for sentence in grounded.unsupported[:5]:
        parts.append(Text(f"  not backed: {sentence}", style="yellow"))
    if answer.trace is not None:
        parts.append(Text(cost_line(answer.trace), style="dim"))
    if answer.feedback_id:
        parts.append(Text(f"feedback: ragteam feedback {answer.feedback_id} --correct | --wrong"))
    return Group(*parts)


def evidence_line(evidence: Evidence) -> Text:
    """The sentence the reader found the answer in, the span in bold, then where it stands."""
    line = Text("  ")
    at = evidence.start - evidence.sentence_start
    if at >= 0 and evidence.sentence[at : at + len(evidence.text)] == evidence.text:
        line.append(evidence.sentence[:at])
        line.append(evidence.text, style="bold reverse")
        line.append(evidence.sentence[at + len(evidence.text) :])
    else:  # a yes/no reading: the sentence it rests on
        line.append(evidence.sentence)
    line.append(f"  ({visible(evidence.locator)}, reader {evidence.score:.2f})", style="dim")
    return line


def plural(count: int, word: str, words: str | None = None) -> str:
    """`1 model call`, `3 model calls`."""
    return f"{count} {word if count == 1 else (words or word + 's')}"


def cost_line(trace: Trace) -> str:
    t = trace.totals()
    line = (
        f"{plural(t['llm_calls'], 'model call')} ({t['cache_hits']} cached), "
        f"{plural(t['retrieval_calls'], 'retrieval')}, "
        f"{t['prompt_tokens']}+{t['completion_tokens']} tokens, {t['seconds']:.2f} s"
    )
    if t["parse_failures"]:
        line += f", {plural(t['parse_failures'], 'parse failure')}"
    return line


def trace_view(trace: Trace, width: int = 300) -> Group:
    """Each step as a header line (number, kind, role, tokens, seconds, cache) and its input and
    output, shortened to `width` characters."""
    lines: list[Any] = [Text("trace", style="bold underline")]
    for number, step in enumerate(trace.steps, start=1):
        head = Text(f"{number:>2}. ", style="bold")
        head.append(f"{step.kind} ", style="cyan")
        head.append(step.role, style="bold")
        facts = [f"{step.seconds:.2f} s"]
        if step.kind == "llm":
            facts.insert(0, f"{step.prompt_tokens}+{step.completion_tokens} tokens")
        if step.cached:
            facts.append("cached")
        if step.parse_failures:
            facts.append(f"{step.parse_failures} parse failure(s)")
        head.append("  " + ", ".join(facts), style="dim")
        lines.append(head)
        if shown := _input_text(step):
            lines.append(Text(f"    in:  {_short(shown, width)}"))
        lines.append(
            Text(f"    out: {_short(_output_text(step), width)}", style="red" if step.error else "")
        )
    return Group(*lines)


def _input_text(step: Step) -> str:
    if step.kind == "llm" and isinstance(step.input, list) and step.input:
        return step.input[-1].get("content", "")
    if step.input is None:
        return ""
    return step.input if isinstance(step.input, str) else json.dumps(step.input, ensure_ascii=False)


def _output_text(step: Step) -> str:
    if step.kind in ("retrieve", "rerank") and isinstance(step.output, list):
        return ", ".join(f"{h['id']} ({h['title']})" for h in step.output)
    text = step.output if isinstance(step.output, str) else json.dumps(step.output, default=str)
    return f"{text}  [error: {step.error}]" if step.error else text


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."
