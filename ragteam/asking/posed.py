"""The one path from a question to a labelled answer, shared by `ragteam.answer` and the eval
runner: pose the question (multiple choice, claim or open), run the strategy, label the reply,
then check which passages it read support which of its sentences (one place for every
strategy: the answer cites only those, and may abstain when none does)."""

from __future__ import annotations

from dataclasses import replace

from ragteam.agents.judge import judge_with
from ragteam.asking import AskRequest
from ragteam.formats import choice_label, truth_label
from ragteam.strategies.base import Context, Strategy
from ragteam.support.stage import check_support
from ragteam.types import Answer, Citation, Passage, SupportSettings
from ragteam.verdict.stage import fitted_claim

ABSTAIN = "I could not find this in your documents."


def run_posed(
    strategy: Strategy, question: str, ctx: Context, request: AskRequest | None = None
) -> Answer:
    """Answer `question` with `strategy` as `request` asks (default: open, checked, no
    abstention); with its `choices` the answer is an option label, with `claim` "true" or
    "false". A claim's verdict is the fitted verdicts' over the passages the strategy read
    (`verdicts="fitted"`, labelled by the reader's reading) or the strategy's own (`"own"`,
    unchecked); a strategy that declares `decides_verdicts` gives its own. Otherwise the answer
    is checked against the passages read as `request.support_settings` says."""
    request = request or AskRequest()
    choices, claim = request.choices, request.claim
    reply = strategy.run(request.posed(question), ctx)
    text = reply.text
    if choices:
        text = choice_label(reply.text, choices)
        if text != reply.text.strip() and _by_text(reply.text, choices):
            ctx.applied.add("label_from_text")
            if reply.trace is not None:
                reply.trace.note(
                    "format",
                    f"answered with an option's text; mapped to its label {text}",
                    event="label_from_text",
                )
    elif claim:
        text = truth_label(reply.text)
    # a new Answer: the strategy's own is left as it returned it
    result = replace(reply, question=question, text=text)
    if claim and (request.verdicts == "own" or strategy.decides_verdicts):
        final = result
    elif claim:
        final = fitted_claim(result, question, read_passages(result, ctx), ctx.readers.answer())
    else:
        final = checked(result, ctx, request.support_settings, choices)
    return replace(final, applied=frozenset(ctx.applied), work=ctx.retrieved.work(ctx.trace.tally))


def checked(
    result: Answer, ctx: Context, settings: SupportSettings, choices: dict[str, str] | None = None
) -> Answer:
    """`result` checked against every passage its strategy read, as a new Answer: as citations
    only the passages that support it, the rest as `read`; with `settings.abstain`, an answer
    that nothing supports is withheld (the withheld text stays in the trace), unless the span
    reader found its words and did not judge the passages to hold no answer: whether an answer
    is in the documents is the reader's answerability head's to say; how sure it is, the
    support label's."""
    if settings.layer == "off":
        return result  # nothing checked, nothing recorded: the label says "unchecked"
    passages = read_passages(result, ctx)
    if not passages or not result.text.strip():
        return result
    said = (choices or {}).get(result.text, result.text)
    judge = judge_with(ctx, result.question) if settings.layer == "llm" else None
    found = check_support(
        result.question,
        said,
        passages,
        settings,
        result.trace,
        judge,
        tuple(result.evidence),
        ctx.readers,
    )
    given = {c.passage_id: c for c in result.citations}
    by_id = {p.id: p for p in passages}
    text = result.text
    if settings.abstain and _unfounded(found.cited, result):
        if result.trace is not None:
            result.trace.note("support", f"withheld unsupported answer: {text}", event="abstained")
        text = f"{ABSTAIN} Searched: {_searched(ctx.retrieved.queries, len(passages))}"
        found = replace(found, withheld=True)
    return replace(
        result,
        text=text,
        read=[given.get(pid) or Citation.of(by_id[pid]) for pid in found.read],
        citations=[given.get(pid) or Citation.of(by_id[pid]) for pid in found.cited],
        support=found,
    )


def would_withhold(result: Answer) -> bool:
    """Whether `--abstain` would withhold this checked answer (see `checked`)."""
    return _unfounded([c.passage_id for c in result.citations], result)


def _unfounded(cited: list[str], result: Answer) -> bool:
    return not cited and result.found_by_reader() is None


def read_passages(result: Answer, ctx: Context) -> list[Passage]:
    """The passages the strategy read: its citations, then every passage its retrievals handed
    the team (`ctx.retrieved`), once each, in the order first seen."""
    if ctx.index is None:
        return []
    seen: dict[str, Passage] = {}
    for c in result.citations:
        if c.passage_id not in seen and (p := ctx.index.passage(c.passage_id)) is not None:
            seen[c.passage_id] = p
    for p in ctx.retrieved.passages():
        seen.setdefault(p.id, ctx.index.passage(p.id) or p)
    return list(seen.values())


def _searched(queries: list[str], read: int) -> str:
    """What was searched, for a person: the first search (the question as asked), and how many
    more the team made (a strategy's own queries, such as the question with a span read, are
    its workings, not words to show), and the passages read."""
    shown = f'"{queries[0]}"' if queries else "nothing"
    more = f" and {len(queries) - 1} more searches" if len(queries) > 1 else ""
    return f"{shown}{more} ({read} passages read, none supports an answer)."


def _by_text(said: str, choices: dict[str, str]) -> bool:
    """Whether a reply named an option by its text (not by its label)."""
    text = said.strip().lower().rstrip(".")
    return any(text == option.lower() for option in choices.values())
