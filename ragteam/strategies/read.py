"""`read`: retrieve the top k once, then the span reader reads every one of them and the answer
is the best span found across them, with the sentence it stands in and where that is. No
generation: the answer is words of a passage, and it comes in well under a second.

A true/false claim or a multiple-choice question gets a verdict instead (`ragteam.verdict`):
a label decided by a model fitted on training rows over what the reader reads in the passages,
with the passage it rests on, or said to rest on none."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from ragteam.formats import posed_parts, search_text
from ragteam.reader import Reading, Span, load_reader, read_traced
from ragteam.retrieval import retrieve_traced
from ragteam.strategies.base import Context, bounded
from ragteam.types import Answer, Citation, Evidence, Passage

EVIDENCE_KEPT = 3  # readings kept as the answer's evidence (the best first)


@dataclass
class Read:
    """Retrieve top-k, read every passage with the span reader, answer with the best span."""

    name: ClassVar[str] = "read"
    roles: ClassVar[tuple[str, ...]] = ()
    needs_index: ClassVar[bool] = True
    needs_model: ClassVar[bool] = False  # the model is loaded only if a support layer asks
    decides_verdicts: ClassVar[bool] = True  # its claims are the verdict stage's already
    k: int = bounded(5, 1, 100)
    weights: str = ""  # a reader weights file other than the shipped one
    verdicts: str = ""  # a verdict file (`ragteam train verdict`) other than the shipped one

    def run(self, question: str, ctx: Context) -> Answer:
        index = ctx.require_index(self.name)
        fmt, stem, choices = posed_parts(question)
        if fmt != "open":
            found = retrieve_traced(
                index, ctx.trace, ctx.retrieved, "retriever", search_text(question), self.k
            )
            return self._verdict(question, stem, choices, found, ctx)
        found = retrieve_traced(index, ctx.trace, ctx.retrieved, "retriever", question, self.k)
        reader = load_reader(Path(self.weights) if self.weights else None)
        reading = read_traced(reader, ctx.trace, question, found, top=EVIDENCE_KEPT * 4)
        evidence = evidence_of(reading, found, reader.calibration.abstain)
        if not evidence:
            return Answer(question, "", self.name, [], ctx.trace)
        best = {p.id: p for p in found}[evidence[0].passage_id]
        text = evidence[0].text
        return Answer(question, text, self.name, [Citation.of(best)], ctx.trace, evidence=evidence)

    def _verdict(
        self, posed: str, stem: str, choices: dict[str, str], found: list[Passage], ctx: Context
    ) -> Answer:
        from ragteam.verdict.stage import decide, verdict_answer

        verdict = decide(
            stem,
            choices,
            found,
            ctx.trace,
            Path(self.weights) if self.weights else None,
            Path(self.verdicts) if self.verdicts else None,
        )
        return verdict_answer(posed, self.name, verdict, found, ctx.trace, choices)


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
    where = passage.place() or passage.title
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
