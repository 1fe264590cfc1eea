"""Build SMART trajectories from training questions: intents, retrieval, locator labels,
generator targets; rendered as long and short training examples in SMART's text format.

Intent sources, in order of preference (recorded per question as `intent_source`):
- `gold`: the data's own sub-questions (MuSiQue decompositions, `#n` resolved);
- `teacher`: a teacher model playing SMART's reconstructor role (any backend);
- `heuristic`: the question itself, then the titles of supporting paragraphs that the question
  names (comparison questions name both), at most `max_intents`.

Locator labels: with gold sentences (HotpotQA) a passage is `[Relevant]` when it holds a gold
supporting sentence of its title, and the fact is those sentences, verbatim, one a line; a
MuSiQue supporting paragraph is relevant with the sentence that holds a step answer (else the
one sharing most words with the sub-questions); a plain row's passage is relevant when it holds
an answer, with that sentence. A teacher, when given, judges plain rows instead.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from ragteam.agents.role import Solo
from ragteam.common.metrics import f1_score, normalize_answer
from ragteam.errors import ParseError
from ragteam.llm.base import ChatModel
from ragteam.retrieval.index import Index
from ragteam.smart import roles
from ragteam.smart.format import (
    GENERATOR,
    LOCATOR,
    RECONSTRUCTOR,
    Judgement,
    Trajectory,
    render_generator,
    render_locator,
    render_prompt,
    render_reconstructor,
    render_retrieval,
    render_trajectory,
)
from ragteam.smart.training.data import YES_NO, TrainQuestion
from ragteam.smart.training.settings import BuildSettings
from ragteam.trace import Trace
from ragteam.types import Passage, Retrieved


@dataclass
class Item:
    """One question's trajectory and where each part came from."""

    id: str
    question: str
    answers: list[str]
    intent_source: str
    trajectory: Trajectory
    passage_ids: list[str]
    gold_titles: list[str]
    split: str = "train"  # train | validation
    label_source: str = "gold"
    posed: str = ""  # the question as the agent is asked it (options, true/false framing)
    format: str = "open"  # open | multiple_choice | claim
    labels: list[str] = field(default_factory=list)  # what its answer is one of (options' labels)

    @property
    def prompt(self) -> str:
        return render_prompt(self.posed or self.question)

    @property
    def answer_only(self) -> bool:
        """No evidence labels: only its generator example is a training text (its locator
        judgements are not known, so they must not be taught)."""
        return self.label_source == "none"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def heuristic_intents(q: TrainQuestion, max_intents: int) -> list[str]:
    """The question itself, then each supporting title that the question names."""
    intents = [q.question.rstrip("?").strip()]
    asked = q.question.lower()
    for title in q.facts:
        name = re.sub(r"\s*\(.*\)$", "", title).strip()
        if name and name.lower() in asked:
            intents.append(name)
    return list(dict.fromkeys(intents))[:max_intents]


def intents_for(
    q: TrainQuestion, settings: BuildSettings, teacher: ChatModel | None, trace: Trace
) -> tuple[list[str], str]:
    if q.sub_questions:
        return list(q.sub_questions[: settings.max_intents]), "gold"
    if teacher is not None:
        try:
            return roles.reconstruct(
                Solo(teacher, trace), q.question, settings.max_intents
            ), "teacher"
        except ParseError:
            pass  # the teacher's failure is in the trace; fall back below
    return heuristic_intents(q, settings.max_intents), "heuristic"


def gold_facts(q: TrainQuestion, passage: Passage) -> list[str]:
    """Verbatim sentences of `passage` that the data marks as evidence (empty: irrelevant)."""
    squashed = roles.squash(passage.text)
    if q.kind == "hotpotqa":
        wanted = q.facts.get(passage.title, ())
        return [roles.squash(s) for s in wanted if roles.squash(s) and roles.squash(s) in squashed]
    if q.kind == "musique":
        if passage.title not in q.facts:
            return []
        return _best_sentence(passage.text, [*q.sub_answers, *q.answers], list(q.sub_questions))
    if q.kind == "noevidence":
        return []
    return _best_sentence(passage.text, list(q.evidence_answers), [], require_answer=True)


def _best_sentence(
    text: str, answers: list[str], topics: list[str], require_answer: bool = False
) -> list[str]:
    candidates = roles.sentences(text)
    keys = [normalize_answer(a) for a in answers if normalize_answer(a) not in ("", *YES_NO)]
    holding = [s for s in candidates if any(k in normalize_answer(s) for k in keys)]
    if holding:
        return holding[:1]
    if require_answer or not candidates:
        return []
    return [max(candidates, key=lambda s: f1_score(s, topics or [""]))]


def judge(
    q: TrainQuestion, passages: list[Passage], teacher: ChatModel | None, trace: Trace
) -> tuple[list[Judgement], str]:
    """One judgement per passage, numbered as in the trajectory."""
    judgements: list[Judgement] = []
    use_teacher = teacher is not None and q.kind == "plain"
    for n, p in enumerate(passages, start=1):
        facts: list[str] = []
        if use_teacher:
            try:
                located = roles.locate(Solo(teacher, trace), q.posed, n, p)
                facts = [located.fact] if located.relevant and located.fact else []
            except ParseError:
                facts = gold_facts(q, p)
        else:
            facts = gold_facts(q, p)
        relevant = bool(facts)
        judgements.append(Judgement(n, p.title if relevant else "", relevant, "\n".join(facts)))
    if q.kind == "noevidence":
        return judgements, "none"
    return judgements, "teacher" if use_teacher else "gold"


def retrieve_for(
    q: TrainQuestion, intents: list[str], index: Index, settings: BuildSettings, trace: Trace
) -> list[Passage]:
    """The trajectory's passages (agents/smart.retrieval_block, as inference shows them): the
    posed question first when `question_first`, at most `max_passages`."""
    asked = q.asked.search if settings.question_first else None
    block = roles.retrieval_block  # the passages are only shown, never checked: none kept
    return block(index, trace, Retrieved(), intents, settings.k, settings.max_passages, asked)


def build_item(
    q: TrainQuestion, index: Index, settings: BuildSettings, teacher: ChatModel | None = None
) -> Item:
    """The whole trajectory of one question, from its own retrieval (never another's)."""
    trace = Trace()
    intents, source = intents_for(q, settings, teacher, trace)
    passages = retrieve_for(q, intents, index, settings, trace)
    judgements, label_source = judge(q, passages, teacher, trace)
    cited = [j.index for j in judgements if j.relevant]
    trajectory = Trajectory(
        intents=intents,
        passages=[(p.title, p.text) for p in passages],
        judgements=judgements,
        answer=q.answers[0],
        citations=cited,
    )
    return Item(
        q.id,
        q.question,
        list(q.answers),
        source,
        trajectory,
        [p.id for p in passages],
        list(q.facts),
        label_source=label_source,
        posed=q.posed,
        format=q.asked.format,
        labels=q.asked.labels,
    )


@dataclass(frozen=True)
class Example:
    """One training text; the first `prompt_chars` characters are prompt (no loss)."""

    id: str
    role: str  # long | reconstructor | locator | generator
    text: str
    prompt_chars: int
    split: str = "train"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def long_example(item: Item) -> Example:
    prompt = item.prompt
    return Example(
        f"{item.id}/long",
        "long",
        prompt + render_trajectory(item.trajectory),
        len(prompt),
        item.split,
    )


def short_examples(item: Item) -> list[Example]:
    """One example per role; the prompt holds every earlier stage."""
    t = item.trajectory
    prompt = item.prompt
    recon = render_reconstructor(t.intents)
    retrieval = render_retrieval(t.passages)
    locator = render_locator(t.judgements)
    stages = [
        ("reconstructor", prompt + RECONSTRUCTOR, recon[len(RECONSTRUCTOR) :].rstrip("\n")),
        (
            "locator",
            prompt + recon + retrieval + LOCATOR,
            locator[len(LOCATOR) :].rstrip("\n"),
        ),
        (
            "generator",
            prompt + recon + retrieval + locator + GENERATOR,
            render_generator(t.answer, t.citations)[len(GENERATOR) :],
        ),
    ]
    return [
        Example(f"{item.id}/{role}", role, head + target, len(head), item.split)
        for role, head, target in stages
        if role == "generator" or not item.answer_only
    ]


def assign_splits(
    items: list[Item], settings: BuildSettings, kept: dict[str, str] | None = None
) -> None:
    """A seeded held-out slice of whole questions for validation loss. `kept` (question id ->
    split, from an earlier build) fixes the split of the questions it names, so that a model
    trained on the earlier build is never validated on questions it was trained on; the new
    questions get their own seeded held-out share."""
    kept = kept or {}
    for item in items:
        item.split = kept.get(item.id, "train")
    new = [n for n, item in enumerate(items) if item.id not in kept]
    random.Random(settings.seed).shuffle(new)
    held = max(1, round(len(new) * settings.validation_share)) if len(new) > 1 else 0
    for position in new[:held]:
        items[position].split = "validation"


def build_items(
    questions: list[TrainQuestion],
    index: Index,
    settings: BuildSettings,
    teacher: ChatModel | None = None,
    progress: Callable[[], None] | None = None,
) -> Iterator[Item]:
    for q in questions:
        yield build_item(q, index, settings, teacher)
        if progress:
            progress()


@dataclass
class Statistics:
    questions: int = 0
    examples: Counter[str] = field(default_factory=Counter)
    intent_sources: Counter[str] = field(default_factory=Counter)
    formats: Counter[str] = field(default_factory=Counter)
    judgements: Counter[str] = field(default_factory=Counter)
    intents: int = 0
    passages: int = 0
    gold_all_retrieved: int = 0
    gold_retrieved: float = 0.0
    no_relevant: int = 0
    answer_only: int = 0
    tokens: dict[str, list[int]] = field(default_factory=dict)

    def add(self, item: Item, examples: list[Example], count: Callable[[str], int]) -> None:
        self.questions += 1
        self.intent_sources[item.intent_source] += 1
        self.formats[item.format] += 1
        self.intents += len(item.trajectory.intents)
        self.passages += len(item.trajectory.passages)
        if item.answer_only:  # its judgements are no labels: not counted as such
            self.answer_only += 1
        else:
            for j in item.trajectory.judgements:
                self.judgements["relevant" if j.relevant else "irrelevant"] += 1
            self.no_relevant += not any(j.relevant for j in item.trajectory.judgements)
        seen = {title for title, _ in item.trajectory.passages}
        gold = set(item.gold_titles)
        if gold:
            self.gold_all_retrieved += gold <= seen
            self.gold_retrieved += len(gold & seen) / len(gold)
        for ex in examples:
            self.examples[ex.role] += 1
            self.tokens.setdefault(ex.role, []).append(count(ex.text))

    def to_dict(self) -> dict[str, Any]:
        n = max(1, self.questions)
        relevant, irrelevant = self.judgements["relevant"], self.judgements["irrelevant"]
        return {
            "questions": self.questions,
            "examples_per_role": dict(self.examples),
            "intent_sources": dict(self.intent_sources),
            "formats": dict(self.formats),
            "intents_per_question": round(self.intents / n, 3),
            "passages_per_question": round(self.passages / n, 3),
            "judgements": {"relevant": relevant, "irrelevant": irrelevant},
            "relevant_share": round(relevant / max(1, relevant + irrelevant), 3),
            "questions_without_relevant_passage": self.no_relevant,
            "answer_only_questions": self.answer_only,
            "gold_paragraphs_all_retrieved": round(self.gold_all_retrieved / n, 3),
            "gold_paragraphs_retrieved_mean": round(self.gold_retrieved / n, 3),
            "tokens": {role: _summary(v) for role, v in self.tokens.items()},
        }


def _summary(values: list[int]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "total": sum(ordered),
        "mean": round(sum(ordered) / len(ordered), 1),
        "p50": ordered[len(ordered) // 2],
        "max": ordered[-1],
    }
