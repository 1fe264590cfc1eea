"""`read`: retrieve the top k once, then the span reader reads every one of them and the answer
is the best span found across them, with the sentence it stands in and where that is. No
generation: the answer is words of a passage, and it comes in well under a second.

A true/false claim or a multiple-choice question gets a verdict instead (`ragteam.verdict`):
a label decided by a model fitted on training rows over what the reader reads in the passages,
with the passage it rests on, or said to rest on none."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ragteam.formats import posed_parts, search_text
from ragteam.reader import Reader, Reading, Span, load_reader, read_traced
from ragteam.retrieval import retrieve_traced
from ragteam.strategies.base import Context
from ragteam.types import Answer, Citation, Evidence, Passage, SentenceSupport, Support

if TYPE_CHECKING:
    from ragteam.verdict import Verdict

EVIDENCE_KEPT = 3  # readings kept as the answer's evidence (the best first)


@dataclass
class Read:
    """Retrieve top-k, read every passage with the span reader, answer with the best span."""

    name: ClassVar[str] = "read"
    roles: ClassVar[tuple[str, ...]] = ()
    needs_index: ClassVar[bool] = True
    needs_model: ClassVar[bool] = False  # the model is loaded only if a support layer asks
    k: int = 5
    weights: str = ""  # a reader weights file other than the shipped one
    verdicts: str = ""  # a verdict file (`ragteam train verdict`) other than the shipped one

    def run(self, question: str, ctx: Context) -> Answer:
        index = ctx.require_index(self.name)
        from pathlib import Path

        reader = load_reader(Path(self.weights) if self.weights else None)
        fmt, stem, choices = posed_parts(question)
        if fmt != "open":
            found = retrieve_traced(
                index, ctx.trace, ctx.retrieved, "retriever", search_text(question), self.k
            )
            return self._verdict(question, stem, choices, found, reader, ctx)
        found = retrieve_traced(index, ctx.trace, ctx.retrieved, "retriever", question, self.k)
        reading = read_traced(reader, ctx.trace, question, found, top=EVIDENCE_KEPT * 4)
        evidence = evidence_of(reading, found, reader.calibration.abstain)
        if not evidence:
            return Answer(question, "", self.name, [], ctx.trace)
        best = {p.id: p for p in found}[evidence[0].passage_id]
        text = evidence[0].text
        return Answer(question, text, self.name, [Citation.of(best)], ctx.trace, evidence=evidence)

    def _verdict(
        self,
        posed: str,
        stem: str,
        choices: dict[str, str],
        found: list[Passage],
        reader: Reader,
        ctx: Context,
    ) -> Answer:
        import time
        from pathlib import Path

        from ragteam.retrieval.encoder_registry import make_encoder
        from ragteam.retrieval.encoders import EncoderSpec
        from ragteam.trace import Step
        from ragteam.verdict import choice_verdict, claim_verdict, load_verdicts

        started = time.perf_counter()
        fitted = load_verdicts(reader.identity, Path(self.verdicts) if self.verdicts else None)
        encoder = make_encoder(EncoderSpec())
        if choices:
            verdict = choice_verdict(stem, choices, found, reader, encoder, fitted)
        else:
            verdict = claim_verdict(stem, found, reader, encoder, fitted)
        ctx.trace.add(
            Step(
                kind="read",
                role="verdict",
                input={"statement": stem, "choices": choices, "passages": [p.id for p in found]},
                output=verdict.to_dict(),
                seconds=time.perf_counter() - started,
                meta={"reader": reader.identity},
            )
        )
        cited = [Citation.of(p) for p in found if p.id == verdict.passage_id]
        return Answer(
            posed,
            verdict.label,
            self.name,
            cited,
            ctx.trace,
            read=[Citation.of(p) for p in found],
            # a claim is labelled here; an option is checked by the support stage like an answer
            support=None if choices else _verdict_support(verdict, found),
            why=verdict.reason,
        )


def evidence_of(reading: Reading, passages: list[Passage], abstain: float) -> list[Evidence]:
    """The reading's spans as evidence records (one per passage and place, best first), each
    scored by the probability of what it says over all the passages (0 when the answerability
    head puts "no answer" at or above `abstain`)."""
    by_id = {p.id: p for p in passages}
    answerable = reading.no_answer < abstain
    kept: list[Evidence] = []
    for span in reading.spans:
        if len(kept) == EVIDENCE_KEPT:
            break
        if any(e.passage_id == span.passage_id and e.start == span.start for e in kept):
            continue
        score = reading.answer_score(span.text) if answerable else 0.0
        kept.append(_evidence(span, by_id[span.passage_id], score, answerable))
    return kept


def _evidence(span: Span, passage: Passage, score: float, answerable: bool) -> Evidence:
    where = passage.locator.describe() if passage.locator else passage.title
    return Evidence(
        span.passage_id,
        span.start,
        span.end,
        span.text,
        span.sentence,
        span.sentence_start,
        where,
        score,
        answerable,
    )


def _verdict_support(verdict: Verdict, found: list[Passage]) -> Support:
    """A verdict labelled like any answer: supported when a passage's reading backs it (that
    passage, the reader's yes or no reading at or above GROUNDED), not supported otherwise."""
    from ragteam.verdict import GROUNDED

    backed = bool(verdict.passage_id)
    said = SentenceSupport(
        verdict.label,
        0,
        len(verdict.label),
        verdict.probability,
        (verdict.passage_id,) if backed else (),
        backed,
    )
    return Support("reader", GROUNDED, (said,), tuple(p.id for p in found))
