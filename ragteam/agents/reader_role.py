"""The span reader playing a fact locator (SMART's, optionally): it reads the question against
every passage of the block at once, the passages whose best reading is strongest come first,
and the sentence of each of the `relevant` best readings is that passage's located fact, so
the generator writes from facts found anywhere in the block, not from passage [1]."""

from __future__ import annotations

from ragteam.agents.smart_format import Judgement
from ragteam.reader import Reader, Reading, read_traced
from ragteam.trace import Trace
from ragteam.types import Passage

RELEVANT = 2  # passages judged relevant: the bridge and the answer of a two-hop question


def best_by_passage(reading: Reading) -> dict[str, tuple[float, str]]:
    """Passage id -> (its best span's score, the sentence around that span)."""
    best: dict[str, tuple[float, str]] = {}
    for span in reading.spans:
        if span.passage_id not in best and span.kind == "span":
            best[span.passage_id] = (span.score, span.sentence)
    return best


def locate(
    reader: Reader, trace: Trace, question: str, passages: list[Passage], relevant: int = RELEVANT
) -> tuple[list[Passage], list[Judgement], Reading]:
    """The block reordered by the reader (best reading first, the rest in their order), a
    judgement per passage in that order (the `relevant` best with their sentences), and the
    reading itself."""
    reading = read_traced(reader, trace, question, passages, top=max(8, 4 * len(passages)))
    best = best_by_passage(reading)
    ordered = sorted(passages, key=lambda p: -best.get(p.id, (-1.0, ""))[0])
    chosen = {p.id for p in ordered[:relevant] if p.id in best}
    judgements = [
        Judgement(n, p.title, True, best[p.id][1])
        if p.id in chosen
        else Judgement(n, p.title, False)
        for n, p in enumerate(ordered, start=1)
    ]
    return ordered, judgements, reading
