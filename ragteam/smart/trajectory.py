"""SMART, single-model trajectory mode: one model trained on SMART's text format plays all
four roles in one growing text (paper, Algorithm 1):

generate until `</eor>` -> parse the intents -> retrieve top-k per intent -> append the
`<retrieval>` block -> generate until `</eol>` -> parse the judgements -> generate the answer until
`</eog>`. Each continuation extends the previous prompt, so llama.cpp reuses its KV state.

A stage whose output does not parse is a failed step in the trace (the model is trained on the
format; asking again at temperature 0 would repeat it), and the pipeline degrades as the modular
mode does: no intents -> retrieve with the question; an invented fact -> that judgement is
dropped from the text the generator sees.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ragteam.agents.views import before
from ragteam.errors import InputError
from ragteam.formats import Posed
from ragteam.llm.base import ChatModel, Completion, TextModel, TextRequest, streams
from ragteam.llm.fit import fit_text
from ragteam.reader import Reader, Reading
from ragteam.reader.stage import locate as reader_locate
from ragteam.smart import roles
from ragteam.smart.format import (
    CITE,
    EOG,
    EOL,
    EOR,
    GENERATOR,
    IRRELEVANT,
    LOCATOR,
    RECONSTRUCTOR,
    RELEVANT,
    Judgement,
    Trajectory,
    parse_generator,
    parse_intents,
    parse_locator,
    render_locator,
    render_prompt,
    render_retrieval,
)
from ragteam.smart.grammar import locator_grammar
from ragteam.smart.labels import LabelCalibration, label_bias
from ragteam.smart.rerank import Reranker, rerank_traced
from ragteam.strategies.base import Context
from ragteam.trace import AnswerView, Step, Trace
from ragteam.types import Passage

ROLE_MODEL = "trajectory"  # --role-model trajectory=PATH.gguf picks the trained model


@dataclass(frozen=True)
class TrajectorySettings:
    k: int
    max_intents: int
    max_passages: int
    max_answer_tokens: int
    passage_tokens: int = 200
    # retrieve with the question too (first), beside the model's intents: the agent then finds
    # at least what the question alone finds
    with_question: bool = True
    # added to the logit of the token that makes a judgement "[Relevant]" (not "[Irrelevant]"):
    # > 0 trades locator precision for recall (bench/locator_margin.py measures the trade on
    # held-out training questions)
    locator_bias: float = 0.0
    # fill the block to max_passages with the question's further hits, as `train build
    # --question-first` trains on; off by default: on v4 it showed more gold (+.10 retrieval
    # recall) that the locator did not find, and F1 fell .028 (docs/benchmarks.md section 19a)
    fill_block: bool = False
    # constrain the locator to SMART's format with facts copied from the passages
    # (ragteam/smart/grammar.py)
    locator_grammar: bool = True
    # per-label logit biases for labelled formats, fitted on training rows for this adapter
    # (ragteam/smart/labels.py); None: the generator's own preference
    calibration: LabelCalibration | None = None
    # orders the block by reading each passage beside the question (the agent answers from
    # [1]: docs/benchmarks.md sections 20a and 21); None keeps retrieval order
    reranker: Reranker | None = None
    # the span reader locates the facts (and orders the block) instead of the model
    reader: Reader | None = None


def continue_text(
    ctx: Context,
    role: str,
    prompt: str,
    stop: str,
    max_tokens: int,
    model: ChatModel,
    logit_bias: dict[int, float] | None = None,
    grammar: str | None = None,
    first_token_bias: dict[int, float] | None = None,
    view: AnswerView | None = None,
) -> Step:
    """One raw-text continuation by `model`, recorded as an llm step of `role`.
    `first_token_bias` applies to the first generated token only (a label's choice): that token
    is one call, the rest a second one continuing it (llama.cpp keeps the shared KV state).
    The text is reported to the trace's `on_writing` listener as it is written (`view`: what
    of it is the answer)."""
    if not isinstance(model, TextModel):
        raise InputError(
            "smart mode=trajectory needs a model that continues raw text: an in-process GGUF "
            "trained with `ragteam train fit` (--model PATH.gguf)"
        )
    sink = ctx.trace.writer(role, view)
    parts: list[Completion] = []
    if first_token_bias and max_tokens > 1:
        first = TextRequest(prompt, max_tokens=1, stop=(stop,), logit_bias=first_token_bias)
        parts.append(model.complete_text(first))
    head = "".join(p.text for p in parts)
    watch = None
    if sink is not None and streams(model):
        watch = lambda text, tokens: sink(head + text, len(parts) + tokens)  # noqa: E731
    rest = TextRequest(
        prompt + head,
        max_tokens=max_tokens - len(parts),
        stop=(stop,),
        logit_bias=logit_bias,
        grammar=grammar,
    )
    parts.append(model.complete_text(rest, watch))
    if sink is not None:
        sink(head + parts[-1].text, sum(p.completion_tokens for p in parts))
    meta: dict[str, Any] = {"mode": "trajectory", "logit_bias": logit_bias or None}
    meta |= {"first_token_bias": first_token_bias or None, "grammar": grammar and "locator"}
    meta = {k: v for k, v in meta.items() if v}
    return ctx.trace.add(
        Step(
            kind="llm",
            role=role,
            input=[{"role": "raw", "content": prompt}],
            output=head + parts[-1].text,
            prompt_tokens=parts[0].prompt_tokens,
            completion_tokens=sum(p.completion_tokens for p in parts),
            seconds=sum(p.seconds for p in parts),
            cached=all(p.cached for p in parts),
            meta=meta,
        )
    )


def relevant_bias(model: ChatModel, bias: float) -> dict[int, float]:
    """`bias` on the first token where "[Relevant]" and "[Irrelevant]" part (empty for 0)."""
    if not bias:
        return {}
    tokenize = getattr(model, "tokenize", None)
    if tokenize is None:
        raise InputError(
            "smart locator_bias needs a model whose tokenizer ragteam reads: an in-process GGUF"
        )
    relevant, irrelevant = tokenize(RELEVANT), tokenize(IRRELEVANT)
    parted = next(
        (n for n, (a, b) in enumerate(zip(relevant, irrelevant, strict=False)) if a != b), None
    )
    if parted is None:
        raise InputError("smart locator_bias: the tokenizer reads both judgements alike")
    return {relevant[parted]: bias}


@dataclass(frozen=True)
class Ran:
    """A run's trajectory, the passages its numbers refer to, and the reader's reading of
    them (None when the model located the facts)."""

    trajectory: Trajectory
    passages: list[Passage]
    reading: Reading | None = None


def run_trajectory(
    posed: Posed,
    ctx: Context,
    s: TrajectorySettings,
    model: ChatModel | None = None,
    asked: str | None = None,
) -> Ran:
    """The whole trajectory of one question (see `Ran`); `asked`: its text as fitted to the
    model's context (default: the posed text)."""
    question = asked if asked is not None else posed.text
    model = model or ctx.model_for(ROLE_MODEL)
    t = Trajectory()
    reading = None
    text = render_prompt(question) + RECONSTRUCTOR
    step = continue_text(ctx, "reconstructor", text, EOR, 96, model)
    t.intents = parse_intents(step.output)[: s.max_intents]
    if not step.output.strip().startswith("Search(") or not t.intents:
        ctx.trace.failed(step, "no Search(...) intents; retrieving with the question")
        t.intents = [question]
    text += step.output.strip() + EOR + "\n\n"
    searched = posed.search if s.with_question else None
    index = ctx.require_index("smart")
    found = roles.retrieval_block(
        index, ctx.trace, ctx.retrieved, t.intents, s.k, s.max_passages, searched, s.fill_block
    )
    if s.reranker is not None:
        found = rerank_traced(s.reranker, ctx.trace, question, found)
    passages = [
        dataclasses.replace(p, text=fit_text(model, p.text, s.passage_tokens)[0]) for p in found
    ]
    if s.reader is not None:
        passages, t.judgements, reading = reader_locate(s.reader, ctx.trace, question, passages)
    t.passages = [(p.title, p.text) for p in passages]
    text += render_retrieval(t.passages) + LOCATOR
    if s.reader is None:
        bias = relevant_bias(model, s.locator_bias)
        grammar = locator_grammar(t.passages) if s.locator_grammar else None
        # the grammar bounds the output itself: room for three copied sentences a passage
        budget = (120 if grammar else 48) * max(1, len(passages)) + 32
        step = continue_text(ctx, "locator", text, EOL, budget, model, bias, grammar)
        t.judgements = _check_judgements(ctx.trace, step, passages)
    text += render_locator(t.judgements)[len(LOCATOR) :] + GENERATOR
    labels = label_bias(model.tokenize, posed, s.calibration) if s.calibration else {}
    step = continue_text(
        ctx,
        "generator",
        text,
        EOG,
        s.max_answer_tokens,
        model,
        first_token_bias=labels,
        view=before(f"\n{CITE}"),
    )
    t.answer, cites = parse_generator(step.output)
    if not t.answer:
        ctx.trace.failed(step, "empty answer")
    shown = {j.index for j in t.judgements if j.relevant}
    t.citations = [n for n in dict.fromkeys(cites) if n in shown]
    return Ran(t, passages, reading)


def _check_judgements(trace: Trace, step: Step, passages: list[Passage]) -> list[Judgement]:
    """Valid judgements only: a known passage number, judged once, and every fact line
    copied from that passage. Anything else is counted as a parse failure of the step."""
    kept: dict[int, Judgement] = {}
    problems: list[str] = []
    for j in parse_locator(step.output):
        if not 0 < j.index <= len(passages) or j.index in kept:
            problems.append(f"passage [{j.index}] unknown or judged twice")
            continue
        passage = passages[j.index - 1]
        if j.relevant:
            lines = [ln for ln in j.fact.split("\n") if ln.strip()]
            if not lines or not all(roles.fact_in_passage(ln, passage.text) for ln in lines):
                problems.append(f"fact for [{j.index}] is not copied from the passage")
                continue
            j = Judgement(j.index, passage.title, True, "\n".join(roles.squash(x) for x in lines))
        kept[j.index] = j
    if passages and not kept:
        problems.append("no judgement parsed")
    if problems:
        trace.failed(step, "; ".join(problems))
    return [kept[n] for n in sorted(kept)]


def note_trajectory(trace: Trace, t: Trajectory, passages: list[Passage]) -> None:
    """The trajectory's text, and the ids of its passages [1]..[n] as shown."""
    from ragteam.smart.format import render_trajectory

    trace.note(
        "smart",
        "trajectory in SMART's format",
        trajectory=render_trajectory(t),
        passage_ids=[p.doc_id or p.id for p in passages],
        event="trajectory",
    )
