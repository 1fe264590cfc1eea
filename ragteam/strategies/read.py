"""`read`: retrieve the top k, then the span reader reads every one of them and the answer is
the best span found across them, with the sentence it stands in and where that is. With
`hops=2` (the default) it first searches once more with the question and each of the best
spans of a first reading (the bridge of a two-hop question), adding at most k passages. No
generation: the answer is words of a passage, and it comes in well under a second.

A true/false claim or a multiple-choice question gets a verdict instead (`ragteam.verdict`):
a label decided by a model fitted on training rows over what the reader reads in the passages,
with the passage it rests on, or said to rest on none."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from ragteam.formats import Posed
from ragteam.reader import BRIDGE_SPANS, read_traced
from ragteam.reader.stage import Rules, answer_by_reading
from ragteam.reader.unmentioned import unmentioned
from ragteam.retrieval import Index, retrieve_traced
from ragteam.strategies.base import Context, bounded
from ragteam.types import Answer, Passage

HEADER_BACK = 3  # passages looked back through for the header of a table a passage starts in


@dataclass
class Read:
    """Retrieve top-k, search again with the best spans read, read every passage found with
    the span reader, answer with the best span."""

    name: ClassVar[str] = "read"
    roles: ClassVar[tuple[str, ...]] = ()
    needs_index: ClassVar[bool] = True
    needs_model: ClassVar[bool] = False  # the model is loaded only if a support layer asks
    decides_verdicts: ClassVar[bool] = True  # its claims are the verdict stage's already
    k: int = bounded(5, 1, 100)
    # retrieval rounds: each after the first searches again with the question and each of the
    # `bridges` best different spans read so far (the bridge entity of a two-hop question),
    # adding at most k passages not yet found; the answer is read over all of them at once
    hops: int = bounded(2, 1, 3)
    bridges: int = bounded(2, 1, 5)
    weights: str = ""  # a reader weights file other than the shipped one
    verdicts: str = ""  # a verdict file (`ragteam train verdict`) other than the shipped one
    # read a passage of lines a second time as the line the question's words single out (a
    # table row named by its key cell, a definition list's term): `ragteam.reader.view`;
    # measured in docs/benchmarks.md section 49
    key_lines: bool = True
    # answer "which version / chapter / section" with the heading the best passage stands
    # under (`ragteam.reader.headings`)
    heading_answers: bool = True
    # a best span in a table's row answered by the cell of the column the question asks for,
    # by the table's header row (`ragteam.reader.columns`)
    table_columns: bool = True
    # a question asking which option, command, file or line answered by the first code token
    # (`-nostdin`, `\\usepackage{microtype}`) it does not hold among the reader's best spans
    # (`ragteam.reader.tokens`; docs/benchmarks.md section 61)
    code_tokens: bool = True
    # a question about a default answered by the value the best span's entry states as its
    # default ("(Default: none)", "The default value is ~/.bash_history": `ragteam.reader.defaults`)
    default_values: bool = True
    # an answer that is one item of a list written out ("-b, -j, and -e") grown to the whole
    # list when the question asks for several things (`ragteam.reader.lists`; §62)
    list_answers: bool = True
    # no span made only of the question's own words ("the default X?" is not "X"), except
    # where the question offers a choice (`ragteam.reader.bounds.echoes`)
    skip_echoes: bool = False
    # a question that names something no passage mentions (a word the reader holds only in
    # pieces, absent from the index's BM25 vocabulary) is not answered as found: its best span
    # is a guess, withheld by --abstain (`ragteam.reader.unmentioned`; docs/benchmarks.md §61)
    mentions: bool = True

    def run(self, posed: Posed, ctx: Context) -> Answer:
        index = ctx.require_index(self.name)
        if posed.format != "open":
            found = retrieve_traced(
                index, ctx.trace, ctx.retrieved, "retriever", posed.search, self.k
            )
            return self._verdict(posed, found, ctx)
        question = posed.stem
        found, names = self.gathered(question, ctx)
        reader = ctx.readers.get(self.weights)
        read = answer_by_reading(
            question, found, ctx.trace, self.name, reader, self.rules(), names, _earlier(index)
        )
        return read or Answer(question, "", self.name, [], ctx.trace)

    def rules(self) -> Rules:
        """The proposers and views this strategy's options turn on, by their names."""
        return Rules(**{f.name: getattr(self, f.name) for f in dataclasses.fields(Rules)})

    def gathered(self, question: str, ctx: Context) -> tuple[list[Passage], tuple[str, ...]]:
        """The passages an open question is read over (every search round's), and the names
        of the question no passage mentions (`ragteam.reader.unmentioned`)."""
        index = ctx.require_index(self.name)
        found = retrieve_traced(index, ctx.trace, ctx.retrieved, "retriever", question, self.k)
        reader = ctx.readers.get(self.weights)
        for _ in range(self.hops - 1):
            found += self._follow(question, found, ctx)
        names = unmentioned(question, reader.pieces, index.mentions) if self.mentions else ()
        if names:
            said = ", ".join(names)
            ctx.trace.note("reader", f"no passage mentions {said}", event="unmentioned")
        return found, names

    def _follow(self, question: str, found: list[Passage], ctx: Context) -> list[Passage]:
        """Passages not in `found` that a search for the question with each of the best
        different spans read in `found` brings (at most k, in the order found)."""
        reader = ctx.readers.get(self.weights)
        reading = read_traced(reader, ctx.trace, question, found, top=BRIDGE_SPANS)
        seen, more = {p.id for p in found}, []
        index = ctx.require_index(self.name)
        for bridge in reading.bridges(self.bridges):
            query = f"{question} {bridge.text}"
            for p in retrieve_traced(index, ctx.trace, ctx.retrieved, "retriever", query, self.k):
                if p.id not in seen and len(more) < self.k:
                    seen.add(p.id)
                    more.append(p)
        return more

    def _verdict(self, posed: Posed, found: list[Passage], ctx: Context) -> Answer:
        from ragteam.verdict.stage import decide, verdict_answer

        choices = dict(posed.choices)
        verdict = decide(
            posed.stem,
            choices,
            found,
            ctx.trace,
            ctx.readers.get(self.weights),
            Path(self.verdicts) if self.verdicts else None,
        )
        return verdict_answer(posed.text, self.name, verdict, found, ctx.trace, choices)


def _earlier(index: Index) -> Callable[[str], list[Passage]]:
    """A passage's id -> the passages before it in its document (a table's header where the
    passage starts inside the table), nearest last."""
    return lambda passage_id: index.neighbours(passage_id, HEADER_BACK)[0]
