"""The verdict stage: a true/false claim (or a multiple-choice question) decided by the fitted
verdicts over the passages the team read, recorded as a step of the trace and returned as an
answer labelled like any other (supported when a passage's reading backs it).

`read` decides its verdicts here; for every other strategy `ragteam.asking.posed.run_posed` calls
`fitted_claim` on a claim with the passages the strategy read, after the strategy has said its
own verdict (kept in the trace): on training claims the fitted decision beat both the majority
label and the embedded generator's own verdict (docs/benchmarks.md section 39)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from ragteam.errors import InputError
from ragteam.trace import Step, Trace
from ragteam.types import Answer, Citation, Passage, SentenceSupport, Support
from ragteam.verdict import GROUNDED, Verdict, choice_verdict, claim_verdict, load_verdicts

if TYPE_CHECKING:
    from ragteam.reader import Reader

VERDICT_K = 5  # passages a verdict reads: as many as the shipped verdicts were fitted with
MODES = ("fitted", "own")  # who decides a claim: the fitted verdicts, or the strategy itself


def check_mode(mode: str) -> str:
    """`mode` when it is one of MODES; an InputError naming them otherwise."""
    if mode not in MODES:
        raise InputError(f"unknown verdicts '{mode}': use one of {', '.join(MODES)}")
    return mode


def decide(
    statement: str,
    choices: dict[str, str],
    passages: list[Passage],
    trace: Trace | None,
    reader: Reader,
    verdicts: Path | None = None,
) -> Verdict:
    """The fitted verdict on `statement` (a claim, or with `choices` a question) over
    `passages` as `reader` reads them, recorded in `trace` as the `verdict` role's reading."""
    from ragteam.retrieval.encoder_registry import make_encoder
    from ragteam.retrieval.encoders import EncoderSpec

    started = time.perf_counter()
    fitted = load_verdicts(reader.identity, verdicts)
    encoder = make_encoder(EncoderSpec())
    if choices:
        verdict = choice_verdict(statement, choices, passages, reader, encoder, fitted)
    else:
        verdict = claim_verdict(statement, passages, reader, encoder, fitted)
    if trace is not None:
        trace.add(
            Step(
                kind="read",
                role="verdict",
                input={
                    "statement": statement,
                    "choices": choices,
                    "passages": [p.id for p in passages],
                },
                output=verdict.to_dict(),
                seconds=time.perf_counter() - started,
                meta={"reader": reader.identity},
            )
        )
    return verdict


def verdict_answer(
    question: str,
    strategy: str,
    verdict: Verdict,
    passages: list[Passage],
    trace: Trace | None,
    choices: dict[str, str] | None = None,
) -> Answer:
    """`verdict` as the answer: its label, the passage it rests on cited, every passage it read
    listed; a claim labelled here, an option left to the support stage like any answer."""
    cited = [Citation.of(p) for p in passages if p.id == verdict.passage_id]
    return Answer(
        question,
        verdict.label,
        strategy,
        cited,
        trace,
        read=[Citation.of(p) for p in passages],
        support=None if choices else claim_support(verdict, passages),
        why=verdict.reason,
    )


def fitted_claim(result: Answer, claim: str, passages: list[Passage], reader: Reader) -> Answer:
    """A strategy's reply to `claim` replaced by the fitted verdict over the first VERDICT_K of
    the passages it read, as `reader` reads them; what the strategy said stays in the trace."""
    if result.trace is not None:
        result.trace.note(
            "verdict",
            f"the strategy said {result.text.strip()[:80]!r}; the fitted verdicts decide",
            event="own_verdict",
            said=result.text.strip()[:80],
        )
    read = passages[:VERDICT_K]
    verdict = decide(claim, {}, read, result.trace, reader)
    return verdict_answer(result.question, result.strategy, verdict, read, result.trace)


def claim_support(verdict: Verdict, passages: list[Passage]) -> Support:
    """A verdict labelled like any answer: supported when a passage's reading backs it (that
    passage, the reader's yes or no reading at or above GROUNDED), not supported otherwise."""
    backed = bool(verdict.passage_id)
    said = SentenceSupport(
        verdict.label,
        0,
        len(verdict.label),
        verdict.probability,
        (verdict.passage_id,) if backed else (),
        backed,
    )
    return Support(
        "reader", GROUNDED, (said,), tuple(p.id for p in passages), checked=verdict.label
    )
