"""Plain data shared by every part of ragteam: passages, citations, answers."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ragteam.locator import Locator as Locator  # where a passage stands (re-exported)

if TYPE_CHECKING:
    from ragteam.grounding import Grounding
    from ragteam.trace import Tally, Trace


@dataclass(frozen=True)
class Passage:
    """A retrievable piece of a document (about 100 words). `score` is set by retrievers;
    `locator` says where it stands in its source file (None in indexes of JSONL corpora built
    before they were synced like folders)."""

    id: str
    title: str
    text: str
    doc_id: str = ""
    score: float = 0.0
    locator: Locator | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["locator"] = self.locator.to_dict() if self.locator else None
        return data

    def place(self) -> str:
        """Where it stands, for a person: its locator's text ("" if none); a corpus row's
        also names the row's title (`corpus.jsonl #hp00008 (Village accountant)`)."""
        return self.locator.worded(self.title) if self.locator is not None else ""


@dataclass
class Retrieved:
    """The passages the retrievals of one answer handed the team, each once, in the order first
    seen: what the support stage checks the answer against (collected as the team searches,
    never read back out of the trace)."""

    by_id: dict[str, Passage] = field(default_factory=dict)
    queries: list[str] = field(default_factory=list)  # each search's words, once, in order
    empty_searches: int = 0  # searches that found nothing
    # the passages the model that writes the answer was shown, where a strategy cuts them
    # from what it retrieved (SMART's block of `max_passages`); None: it shows what it found
    shown: list[Passage] | None = None

    def add(self, passages: list[Passage], query: str = "") -> None:
        """One search's passages (`query`: its words)."""
        for p in passages:
            self.by_id.setdefault(p.id, p)
        if query and query not in self.queries:
            self.queries.append(query)
        self.empty_searches += not passages

    def show(self, passages: list[Passage]) -> None:
        """Record the passages shown to the model that writes the answer."""
        self.shown = [*(self.shown or []), *passages]

    def passages(self) -> list[Passage]:
        return list(self.by_id.values())

    def work(self, tally: Tally) -> Work:
        """What the answer's team did: these searches and the trace's `tally` of its steps."""
        found = self.passages()
        shown = self.shown
        return Work(
            passages=tuple(self.by_id),
            documents=_documents(found),
            empty_searches=self.empty_searches,
            shown=None if shown is None else _documents(shown),
            calls=tally.calls,
            failed=tally.failed,
            parse_failures=tally.parse_failures,
            model_calls=tally.model_calls,
            model_calls_unparsed=tally.model_calls_unparsed,
        )


def _documents(passages: list[Passage]) -> tuple[str, ...]:
    """The passages' document ids (a passage without one stands for itself), once each."""
    return tuple(dict.fromkeys(p.doc_id or p.id for p in passages))


@dataclass(frozen=True)
class Work:
    """What one answer's team did, as typed facts collected while it worked (the trace is for
    showing, never read back): the passages its searches found and their documents, the
    searches that found nothing, what the writing model was shown, and its steps' tally
    (`ragteam.trace.Tally`). An answer not finished by `ragteam.asking.posed.run_posed` holds
    none of it."""

    passages: tuple[str, ...] = ()  # ids of the passages found, once each, in the order found
    documents: tuple[str, ...] = ()  # their documents' ids, once each
    empty_searches: int = 0  # searches that found nothing
    shown: tuple[str, ...] | None = None  # documents shown to the writing model (None: all)
    calls: int = 0
    failed: int = 0
    parse_failures: int = 0
    model_calls: int = 0
    model_calls_unparsed: int = 0


def hit_dict(passage: Passage) -> dict[str, Any]:
    """A retrieved passage as search results show it: id, score, title, text, its document,
    and its locator's fields with their words (`text`), as a passage's own JSON nests them
    (None for a corpus row indexed without one)."""
    where = passage.locator
    return {
        "id": passage.id,
        "score": passage.score,
        "title": passage.title,
        "text": passage.text,
        "doc_id": passage.doc_id,
        "locator": where.to_dict() if where else None,
    }


@dataclass(frozen=True)
class Citation:
    """A passage an answer cites (or read): its id, title and document, and where it stands
    (`place`, worded only when shown: `locator`)."""

    passage_id: str
    title: str
    doc_id: str = ""
    place: Locator | None = None

    @classmethod
    def of(cls, passage: Passage) -> Citation:
        return cls(passage.id, passage.title, passage.doc_id, passage.locator)

    @property
    def locator(self) -> str:
        """Where it stands, for a person: `report.pdf p. 12 § Budget` ("" if unknown)."""
        return self.place.worded(self.title) if self.place is not None else ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "passage_id": self.passage_id,
            "title": self.title,
            "doc_id": self.doc_id,
            "locator": self.locator,
        }


@dataclass(frozen=True)
class Span:
    """One reading: `text` = passage.text[start:end] (for a yes/no reading, "yes"/"no" and
    the offsets of the sentence it rests on), the sentence around it and its probability."""

    passage_id: str
    start: int
    end: int
    text: str
    sentence: str
    sentence_start: int
    score: float
    kind: str = "span"  # span | yes | no
    # True: the words stand in the passage's heading path (a version, a chapter's title), read
    # with its text; start and end are then offsets in that path, which is the sentence
    heading: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "score": round(self.score, 4)}


@dataclass(frozen=True)
class Evidence:
    """Words the span reader found in a passage: its reading (`span`: `passage_id`'s
    text[start:end], the sentence they stand in), where the passage stands (`place`, worded
    only when shown: `locator`, else its `title`) and the reader's confidence (`score`);
    `answerable` is False when the reader's answerability head said the passages it read hold
    no answer (its calibrated gate): the words are then only its best guess."""

    span: Span
    place: Locator | None
    score: float
    answerable: bool = True
    title: str = ""

    passage_id = property(lambda self: self.span.passage_id)
    start = property(lambda self: self.span.start)
    end = property(lambda self: self.span.end)
    text = property(lambda self: self.span.text)
    sentence = property(lambda self: self.span.sentence)
    sentence_start = property(lambda self: self.span.sentence_start)
    heading = property(lambda self: self.span.heading)  # the words stand in the heading path

    @property
    def locator(self) -> str:
        return self.place.worded(self.title) if self.place is not None else self.title

    def to_dict(self) -> dict[str, Any]:
        s = self.span
        return {
            "passage_id": s.passage_id,
            "start": s.start,
            "end": s.end,
            "text": s.text,
            "sentence": s.sentence,
            "sentence_start": s.sentence_start,
            "locator": self.locator,
            "score": round(self.score, 4),
            "answerable": self.answerable,
            "heading": s.heading,
            "kind": s.kind,  # span, or the reader's yes or no (the sentence then decides it)
        }


# The support layer used when none is named: CLI, Python and HTTP APIs, chat API and MCP.
DEFAULT_SUPPORT_LAYER = "reader"  # docs/benchmarks.md §30: AUROC 0.80/0.90 vs lexical 0.61/0.73


@dataclass
class Judgement:
    """A fact locator's judgement of one passage (SMART's, MA-RAG's, the span reader's)."""

    index: int  # 1-based passage number
    title: str
    relevant: bool
    fact: str = ""


@dataclass(frozen=True)
class SupportSettings:
    # lexical: content words found in the passage (the default: it measured better than the
    # checker trained so far, docs/benchmarks.md section 25); checker: a trained MiniLM checker
    # (`ragteam train support`), the lexical layer when it cannot load (said in the trace); llm:
    # a model judges each sentence against its closest passages (`ragteam.agents.judge`)
    layer: str = DEFAULT_SUPPORT_LAYER  # a name in `ragteam.support.layers.layer_names()`
    checker_path: str = ""  # the checker file (.safetensors) for layer "checker"
    abstain: bool = False  # answer "not found in your documents" when nothing supports it


@dataclass(frozen=True)
class SentenceSupport:
    text: str
    start: int
    end: int
    score: float  # the best passage's score (probability for the checker, share for lexical)
    passages: tuple[str, ...]  # ids of the passages that support it, best first
    supported: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "score": round(self.score, 4),
            "passages": list(self.passages),
            "supported": self.supported,
        }


@dataclass(frozen=True)
class Support:
    layer: str  # checker | lexical | llm | off
    threshold: float
    sentences: tuple[SentenceSupport, ...] = ()
    read: tuple[str, ...] = ()  # ids of every passage checked
    note: str = ""  # why the layer is not the one asked for, or what was left unchecked
    extra: dict[str, Any] = field(default_factory=dict)
    # the answer nothing supports was withheld (`abstain`): its sentences stay on this record
    # and in the trace, never shown as the answer's
    withheld: bool = False
    # the text the sentences' offsets index ("": the answer's own), or what a label stands
    # for (a chosen option's text): the marks know where they go without asking the choices
    checked: str = ""
    # whether the span reader would give this written answer itself with confidence (the
    # reader layer's second check: `ragteam.support.reading`); False keeps an answer whose
    # sentences are backed from being labelled supported; None: not asked
    sure: bool | None = None

    @property
    def score(self) -> float:
        """The answer's support: its least supported sentence (0 with nothing to check)."""
        return min((s.score for s in self.sentences), default=0.0)

    @property
    def cited(self) -> list[str]:
        """Supporting passage ids in the order the answer first uses them."""
        out: list[str] = []
        for s in self.sentences:
            out += [p for p in s.passages if p not in out]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "threshold": self.threshold,
            "score": round(self.score, 4),
            "sentences": [s.to_dict() for s in self.sentences],
            "read": list(self.read),
            "note": self.note,
            "withheld": self.withheld,
            "sure": self.sure,
        }


@dataclass
class Answer:
    question: str
    text: str
    strategy: str
    citations: list[Citation] = field(default_factory=list)  # what supports the answer
    trace: Trace | None = None
    read: list[Citation] = field(default_factory=list)  # every passage checked ([] unchecked)
    support: Support | None = None  # which passages support which sentence (None: unchecked)
    evidence: list[Evidence] = field(default_factory=list)  # the reader's spans, best first
    why: str = ""  # a verdict's reason in a sentence (true/false, multiple choice)
    # what was done with the asker's settings, as it happened: "instructions" (added to a
    # role that writes the answer), "temperature" (a role sampled at it), "label_from_text"
    # (an option named by its text, mapped to its label); read here, not from the trace
    applied: frozenset[str] = frozenset()
    work: Work = field(default_factory=Work)  # what the team did (`run_posed` fills it in)
    feedback_id: str = ""  # the adaptive router's choice to give feedback on (`ragteam feedback`)
    # the facts a fact locator copied from the passages, by passage id (SMART): a page marks them
    facts: dict[str, str] = field(default_factory=dict)
    # names the question asks about that no passage mentions (`ragteam.reader.unmentioned`):
    # the passages cannot answer it, whatever words the reader found
    unmentioned: tuple[str, ...] = ()

    def grounding(self) -> Grounding:
        """How well this answer is grounded: supported, partly supported, not supported by the
        passages read, no evidence, failed (or unchecked)."""
        from ragteam.grounding import grounding

        return grounding(
            self.text,
            len(self.citations),
            self.work,
            self.support,
            self.found_by_reader(),
            self.unmentioned,
        )

    def found_by_reader(self) -> Evidence | None:
        """The reader's best span when the answer says it and the reader did not judge the
        passages it read to hold no answer: words found in a passage, whatever their support."""
        best = self.evidence[0] if self.evidence else None
        if best is None or not best.answerable or not best.text or best.text not in self.text:
            return None
        return best

    def closest(self) -> Evidence | None:
        """The reader's best evidence when the answer is its words but its label is not
        "supported" (the reader's confidence is under the label's threshold): shown as the
        closest passage found, not as an answer. None for a supported answer, or one that is
        not the reader's words."""
        best = self.evidence[0] if self.evidence else None
        if best is None or not self.text or self.text != best.text:
            return None
        return None if self.grounding().level == "supported" else best

    def marked_text(self) -> str:
        """The answer with an inline `[n]` after each sentence, n the 1-based numbers of the
        citations that support it (the text itself when nothing was checked)."""
        if self.support is None:
            return self.text
        number = {c.passage_id: n for n, c in enumerate(self.citations, start=1)}
        marks = [
            "".join(f"[{number[p]}]" for p in s.passages if p in number)
            for s in self.support.sentences
        ]
        if self.support.checked not in ("", self.text):  # a label checked as what it means
            tail = "".join(marks)
            return self.text + (f" {tail}" if tail else "")
        out, at = [], 0
        for s, mark in zip(self.support.sentences, marks, strict=True):
            end = s.end - 1 if s.text[-1] in ".!?" else s.end  # `in 1973 [1].`
            out += [self.text[at:end], f" {mark}" if mark else ""]
            at = end
        out.append(self.text[at:])
        return "".join(out)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.text,
            "marked": self.marked_text(),
            "strategy": self.strategy,
            "citations": [c.to_dict() for c in self.citations],
            "read": [c.to_dict() for c in self.read],
            "support": self.support.to_dict() if self.support else None,
            "evidence": [e.to_dict() for e in self.evidence],
            "closest": closest.to_dict() if (closest := self.closest()) else None,
            "why": self.why,
            "unmentioned": list(self.unmentioned),
            "applied": sorted(self.applied),
            "feedback_id": self.feedback_id,
            "facts": dict(self.facts),
            "cost": self.trace.totals() if self.trace else {},
            "grounding": self.grounding().to_dict(),
            "trace": self.trace.to_dict() if self.trace else None,
        }
