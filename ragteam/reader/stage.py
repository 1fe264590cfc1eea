"""The span reader playing a fact locator (SMART's, optionally): it reads the question against
every passage of the block at once, the passages whose best reading is strongest come first,
and the sentence of each of the `relevant` best readings is that passage's located fact, so
the generator writes from facts found anywhere in the block, not from passage [1]."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

import numpy as np

from ragteam.common.metrics import normalize_answer
from ragteam.reader import Reader, Reading, Span, read_traced
from ragteam.reader.asks import asks_heading
from ragteam.reader.columns import column_answer, keyed_answer
from ragteam.reader.decider import load_decider
from ragteam.reader.defaults import named_default, said_default
from ragteam.reader.headings import by_content, heading_span, under_release
from ragteam.reader.lists import list_answer
from ragteam.reader.polar import is_polar, polar_answer
from ragteam.reader.ranker import RANKED, Candidate, Ranker, features, polar_features
from ragteam.reader.tokens import code_answer
from ragteam.trace import Trace
from ragteam.types import Answer, Citation, Evidence, Judgement, Passage

HEADED = 3  # passages (the best by content) whose headings a heading question is answered from
RELEVANT = 2  # passages judged relevant: the bridge and the answer of a two-hop question
EVIDENCE_KEPT = 3  # readings kept as an answer's evidence (the best first)


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


@dataclass(frozen=True)
class Rules:
    """How a reading becomes an answer, beyond the reader's best span (each measured in
    docs/benchmarks.md): `key_lines`, a passage of lines read again as the line the question
    singles out (`ragteam.reader.view`); `heading_answers`, "which version, chapter or section" by
    the heading the passage saying the question stands under, and a release the question names
    read over the entries under it (`ragteam.reader.headings`); `skip_echoes`, no
    span of the question's own words alone (`ragteam.reader.bounds`); `table_columns`, a best span
    in a table row by the cell of the column asked for (`ragteam.reader.columns`); `code_tokens`,
    "which option, command or file" by the first code token the question does not hold among
    the best spans (`ragteam.reader.tokens`); `default_values`, a question about a default by the
    value its entry states, or the default stated with most of the question's words
    (`ragteam.reader.defaults`); `list_answers`, an answer that is one item of
    a list written out grown to the whole list when the question asks for several things
    (`ragteam.reader.lists`). None of them by default."""

    key_lines: bool = False
    heading_answers: bool = False
    skip_echoes: bool = False
    table_columns: bool = False
    code_tokens: bool = False
    default_values: bool = False
    list_answers: bool = False


def answer_by_reading(
    question: str,
    passages: list[Passage],
    trace: Trace,
    strategy: str,
    reader: Reader,
    rules: Rules = Rules(),
    unmentioned: tuple[str, ...] = (),
    earlier: Callable[[str], list[Passage]] | None = None,
) -> Answer | None:
    """`reader`'s best span over `passages` as the answer, cited at its passage, with its
    readings as evidence, as `rules` say; None when the reader finds no span at all. A yes/no
    question is answered yes or no. `unmentioned`: names of the question no passage mentions
    (`ragteam.reader.unmentioned`): the readings are then only the reader's best guess, not
    found answers (as when the answerability head says there is none). `earlier`: a passage's
    id -> the passages before it in its document, nearest last (where a table it starts
    inside of has its header: `Index.neighbours`)."""
    reading, passages = reading_for(question, passages, trace, reader, rules)
    sure: float | None = None
    if reader.ranker is not None:  # the fitted ranker picks among every proposal
        said, sure = _picked(question, reading, passages, rules, earlier, reader.ranker)
        if said is not None:
            trace.note("reader", f"the answer ranker's pick: {sure:.3f}", event="ranked")
    else:
        said = _ruled(question, reading, passages, rules, earlier, _decide(reader, trace))
    if said is not None:  # the chosen answer first, the spans read after it
        others = tuple(s for s in reading.spans if s is not said)
        reading = replace(reading, spans=(said, *others))
    evidence = evidence_of(reading, passages, reader, answerable=not unmentioned)
    if not evidence:
        return None
    if sure is not None and evidence[0].answerable:  # the ranker's probability is its confidence
        evidence[0] = replace(evidence[0], score=sure)
    best = {p.id: p for p in passages}[evidence[0].passage_id]
    cited = [Citation.of(best)]
    return Answer(
        question,
        evidence[0].text,
        strategy,
        cited,
        trace,
        evidence=evidence,
        unmentioned=unmentioned,
    )


def reading_for(
    question: str, passages: list[Passage], trace: Trace, reader: Reader, rules: Rules
) -> tuple[Reading, list[Passage]]:
    """The reading an answer is chosen from, and the passages it read: all of them, or the
    entries of a release the question names (`rules.heading_answers`), whether an answer was found
    then judged over all (read last: the reading `--abstain`'s threshold is fitted on,
    bench/abstain_fit.py); its spans ordered by the calibration's passage prior where it has
    one (`ragteam.reader.prior`), and without the reader's yes and no outcomes unless the
    question is a yes/no question (they are its `outcomes` still)."""
    top = EVIDENCE_KEPT * 4
    named = under_release(question, passages) if rules.heading_answers else passages
    reading = read_traced(reader, trace, question, named, top, rules.key_lines, rules.skip_echoes)
    if len(named) < len(passages):
        whole = read_traced(
            reader, trace, question, passages, top, rules.key_lines, rules.skip_echoes
        )
        reading, passages = replace(reading, no_answer=whole.no_answer), named
    if not is_polar(question):  # the reader's yes and no answer only a yes/no question
        reading = replace(reading, spans=tuple(s for s in reading.spans if s.kind == "span"))
    prior = reader.calibration.prior
    if prior is not None and reading.spans:
        was = reading.spans[0]
        reading = prior.ordered(reading, {p.id: n for n, p in enumerate(passages)})
        if (best := reading.spans[0]) is not was:  # the trace says where the prior decided
            note = (
                f"the passage prior put {best.text!r} of {best.passage_id} first, over the "
                f"reader's best {was.text!r} of {was.passage_id}"
            )
            trace.note("reader", note, event="prior", **asdict(prior))
    return reading, passages


def _ruled(
    question: str,
    reading: Reading,
    passages: list[Passage],
    rules: Rules,
    earlier: Callable[[str], list[Passage]] | None,
    decide: Callable[[str, str], float] | None = None,
) -> Span | None:
    """The answer a rule gives over `reading` (None: the reader's best span stands): yes or
    no to a yes/no question (as `decide`, the yes/no decider, says where the reader has one;
    where neither is said, a heading or the best span's table cell);
    to any other, the first of a heading, a row named by its key, the best span's table cell,
    a stated default, then a code token where the answer so far holds none; an answer that is
    one item of a list grows to the list where the question asks for several things."""
    by_id = {p.id: p for p in passages}
    best = reading.best
    polar = is_polar(question)
    said = polar_answer(reading, question, best_text(reading, passages), decide) if polar else None
    if said is None and rules.heading_answers and (kind := asks_heading(question)) is not None:
        said = _under_heading(kind, question, reading, passages)
    if said is None and rules.table_columns and not polar:  # a row named by its key, as written
        said = _keyed(question, reading, passages, earlier)
    if said is None and rules.table_columns and best is not None:
        before = earlier(best.passage_id) if earlier is not None else None
        said = column_answer(question, by_id[best.passage_id], best, before)
    if polar:
        return said
    if said is None and rules.default_values:  # the entry the question names, then the best span's
        said = named_default(question, *_ranked(reading, passages))
    if said is None and rules.default_values:  # the default said with most of the question's words
        said = said_default(question, *_ranked(reading, passages), best)
    if rules.code_tokens and (token := code_answer(question, reading, said)) is not None:
        said = token
    so_far = said if said is not None else best
    if rules.list_answers and so_far is not None:
        grown = list_answer(question, by_id[so_far.passage_id].text, so_far)
        said = grown if grown is not None else said
    return said


def _decide(reader: Reader, trace: Trace) -> Callable[[str, str], float] | None:
    """The reader's yes/no decider as a function of (question, context), loaded at its first
    decision, each decision noted in the trace; None where the reader has none."""
    path = reader.decider_path
    if path is None:
        return None

    def decide(question: str, around: str) -> float:
        decider = load_decider(path)  # once per process
        yes = decider.yes(question, around)
        note = f"the yes/no decider: P(yes) {yes:.3f}"
        trace.note("reader", note, event="decided", decider=decider.identity)
        return yes

    return decide


def proposals(
    question: str,
    reading: Reading,
    passages: list[Passage],
    rules: Rules,
    earlier: Callable[[str], list[Passage]] | None,
) -> list[Candidate]:
    """Every answer proposed for a question that is not yes/no: the reader's RANKED best
    different spans and each rule's answer (as `rules` allow), the same words one candidate
    with all their sources."""
    by_id = {p.id: p for p in passages}
    best = reading.best if reading.best is not None and reading.best.kind == "span" else None
    found: list[tuple[str, Span | None]] = []
    seen: set[str] = set()
    for span in reading.spans:
        words = normalize_answer(span.text)
        if span.kind == "span" and words not in seen and len(seen) < RANKED:
            seen.add(words)
            found.append(("reader", span))
    if rules.heading_answers and (kind := asks_heading(question)) is not None:
        found.append(("heading", _under_heading(kind, question, reading, passages)))
    if rules.table_columns:
        found.append(("keyed", _keyed(question, reading, passages, earlier)))
        if best is not None:
            before = earlier(best.passage_id) if earlier is not None else None
            found.append(("column", column_answer(question, by_id[best.passage_id], best, before)))
    if rules.default_values:
        found.append(("default", named_default(question, *_ranked(reading, passages))))
        found.append(("said_default", said_default(question, *_ranked(reading, passages), best)))
    if rules.code_tokens:
        found.append(("code", code_answer(question, reading, None)))
    if rules.list_answers and best is not None:
        found.append(("list", list_answer(question, by_id[best.passage_id].text, best)))
    merged: dict[str, tuple[Span, set[str]]] = {}
    for source, span in found:
        if span is not None and span.text.strip():
            key = normalize_answer(span.text) or span.text
            merged.setdefault(key, (span, set()))[1].add(source)
    return [Candidate(span, frozenset(sources)) for span, sources in merged.values()]


def _picked(
    question: str,
    reading: Reading,
    passages: list[Passage],
    rules: Rules,
    earlier: Callable[[str], list[Passage]] | None,
    ranker: Ranker,
) -> tuple[Span | None, float]:
    """The ranker's answer and its probability of being right: yes or no to a yes/no
    question, else the most probable of the proposals."""
    if is_polar(question):
        text = best_text(reading, passages)
        said = polar_answer(reading, question, text)
        if said is None:
            return None, 0.0
        yes = ranker.yes(polar_features(question, reading, text))
        word = "yes" if yes >= 0.5 else "no"
        return replace(said, text=word, kind=word), max(yes, 1 - yes)
    candidates = proposals(question, reading, passages, rules, earlier)
    if not candidates:
        return None, 0.0
    texts = {p.id: p.text for p in passages}
    order = {p.id: n for n, p in enumerate(passages)}
    scores = ranker.right([features(question, reading, c, texts, order) for c in candidates])
    best = int(np.argmax(scores))
    return candidates[best].span, float(scores[best])


def _keyed(
    question: str,
    reading: Reading,
    passages: list[Passage],
    earlier: Callable[[str], list[Passage]] | None,
) -> Span | None:
    """A table row the question names by its key cell as written, among the passages in the
    order the reader ranks them (`ragteam.reader.columns.keyed_answer`)."""
    return keyed_answer(question, *_ranked(reading, passages), earlier)


def _ranked(reading: Reading, passages: list[Passage]) -> tuple[list[Passage], dict[str, float]]:
    """`passages` in the order the reader ranks them (by their best spans), and those scores."""
    best = {pid: score for pid, (score, _) in best_by_passage(reading).items()}
    return sorted(passages, key=lambda p: -best.get(p.id, -1.0)), best


def best_text(reading: Reading, passages: list[Passage]) -> str:
    """The text of the passage of the reading's best span ("" when it found none)."""
    best = next((s for s in reading.spans if s.kind == "span"), None)
    return next((p.text for p in passages if best is not None and p.id == best.passage_id), "")


def _under_heading(
    kind: str, question: str, reading: Reading, passages: list[Passage]
) -> Span | None:
    """The heading that answers a `kind` question, of the first of the HEADED passages to
    stand under one, found by that passage's best span (the reading's best when the reader
    ranked none of its words). A release is looked for in the passages that say most of the
    question (`by_content`: the reader ranks a changelog's versions first whatever entry they
    head); a chapter or section in the passages in the order search found them (on
    docqa-train's training files, 63 of 115 such questions right against 53 by content:
    docs/benchmarks.md section 74)."""
    spans = [s for s in reading.spans if s.kind == "span" and not s.heading]
    if not spans:
        return None
    order = by_content(question, passages) if kind == "version" else passages
    for passage in order[:HEADED]:
        found = next((s for s in spans if s.passage_id == passage.id), None)
        found = found or replace(spans[0], passage_id=passage.id, score=0.0)
        if (said := heading_span(kind, passage, found)) is not None:
            return said
    return None


def evidence_of(
    reading: Reading, passages: list[Passage], reader: Reader, answerable: bool = True
) -> list[Evidence]:
    """The reading's spans over `passages` (in the order read) as evidence records (one per
    passage and place, best first), each scored by the reader's confidence that it is a right
    answer (0 when the answerability head puts "no answer" at or above its threshold, or when
    the caller knows the passages cannot answer: `answerable` False)."""
    by_id = {p.id: p for p in passages}
    answerable = answerable and reading.no_answer < reader.calibration.abstain
    kept: list[Evidence] = []
    for span in reading.spans:
        if len(kept) == EVIDENCE_KEPT:
            break
        if any(
            (e.passage_id, e.start, e.heading) == (span.passage_id, span.start, span.heading)
            for e in kept
        ):
            continue
        score = reader.confidence(reading, span, passages) if answerable else 0.0
        kept.append(_evidence(span, by_id[span.passage_id], score, answerable))
    return kept


def _evidence(span: Span, passage: Passage, score: float, answerable: bool) -> Evidence:
    return Evidence(span, passage.locator, score, answerable, passage.title)
