"""SMART, modular inference: intent reconstructor -> retriever -> fact locator -> generator.

Ablations as options: `reconstructor=False` retrieves with the question itself, `locator=False`
gives the generator the raw passages, `retrieve=False` is the generator alone. A role that fails
(invalid JSON after the retry) is recorded in the trace and the pipeline degrades: no intents ->
retrieve with the question; a passage the locator cannot judge -> the generator sees it raw; no
generator answer -> an empty answer with the failure in the trace.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from ragteam.agents.role import role_names
from ragteam.errors import InputError, ParseError
from ragteam.formats import Posed
from ragteam.llm.base import ChatModel
from ragteam.llm.fit import fit_text
from ragteam.reader import Reader, Reading
from ragteam.reader.stage import evidence_of
from ragteam.reader.stage import locate as reader_locate
from ragteam.smart import roles
from ragteam.smart.agent import ADAPTER_NAME, adapter_of, choose, shipped_adapter
from ragteam.smart.format import Judgement, Trajectory, render_trajectory
from ragteam.smart.labels import LabelCalibration, load_calibration
from ragteam.smart.rerank import Reranker, load_reranker
from ragteam.smart.trajectory import (
    ROLE_MODEL,
    TrajectorySettings,
    note_trajectory,
    run_trajectory,
)
from ragteam.strategies.base import Context, bounded, fit_passages, fit_question
from ragteam.types import Answer, Citation, Evidence, Passage

MODES = ("auto", "modular", "trajectory")


@dataclass
class Smart:
    """The trained agent: rewrites the question into what to look up, searches for each,
    keeps only the sentences that matter (copied word for word) and answers citing them."""

    name: ClassVar[str] = "smart"
    # the modular roles, and the one model that plays the whole trajectory (mode=trajectory)
    roles: ClassVar[tuple[str, ...]] = (*role_names(*roles.ROLES), ROLE_MODEL)
    needs_index: ClassVar[bool] = True
    needs_model: ClassVar[bool] = True
    decides_verdicts: ClassVar[bool] = False
    client_text_options: ClassVar[tuple[str, ...]] = ("mode",)
    k: int = bounded(3, 1, 100)
    max_intents: int = bounded(3, 1, 10)
    reconstructor: bool = True
    locator: bool = True
    retrieve: bool = True
    max_answer_tokens: int = bounded(80, 1, 2_048)
    snap_facts: bool = False  # accept a close paraphrase, replaced by the passage sentence
    # also retrieve with the question itself, as a first intent (None: in trajectory mode only)
    with_question: bool | None = None
    # auto: the shipped trained agent on the embedded model, modular on any other model;
    # modular: four prompted roles; trajectory: one trained model plays them all
    mode: str = "auto"
    max_passages: int = bounded(6, 1, 50)  # trajectory mode: passages in the <retrieval> block
    # trajectory mode: logit bias toward judging a passage "[Relevant]" (recall for precision)
    locator_bias: float = 0.0
    # trajectory mode: fill the <retrieval> block to max_passages with the question's further
    # hits, as training builds it (measured worse on v4: docs/benchmarks.md section 19a)
    fill_block: bool = False
    # trajectory mode: decode the locator under a grammar (SMART's format, each passage judged
    # once, facts copied sentence by sentence): no invented fact can drop a judgement
    # (docs/benchmarks.md section 18: parse failures 8% -> 0, F1 unchanged)
    locator_grammar: bool = True
    # trajectory mode, multiple choice and claims: the per-label biases fitted on training rows
    # for the adapter in use (ADAPTER.labels.json beside it), when there are any
    label_calibration: bool = True
    # trajectory mode: order the <retrieval> block with a reranker from `ragteam train
    # rerank` (a file), which reads each passage beside the question (the trained agent
    # answers from passage [1]); empty: retrieval order. None ships: the one trained here did
    # not beat retrieval order on held-out questions (docs/benchmarks.md section 21)
    reranker: str = ""
    # both modes: the span reader (ragteam/reader) locates the facts instead of the model: it
    # reads every passage at once, the passages with the strongest readings come first and
    # the sentences of the two best are the facts the generator writes from
    fact_reader: bool = False

    @staticmethod
    def describe() -> str:
        """Which agent `mode=auto` runs here (for `ragteam strategies`)."""
        adapter = shipped_adapter()
        if adapter is None:
            return f"mode=auto: modular (the trained adapter {ADAPTER_NAME} is not installed)"
        return (
            f"mode=auto: on the embedded model, the trained agent (LoRA adapter {adapter.name}, "
            "ragteam/data/smart-135m-lora.md); modular on any other model"
        )

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InputError(f"smart: mode must be one of {', '.join(MODES)}, not '{self.mode}'")

    def run(self, posed: Posed, ctx: Context) -> Answer:
        question = posed.text
        asked = fit_question(ctx, question, roles=self.roles)
        mode, model = self._mode(ctx)
        if mode == "trajectory":
            return self._run_trajectory(posed, asked, ctx, model)
        trajectory = Trajectory()
        passages: list[Passage] = []
        facts: list[tuple[int, str, str]] = []
        located: dict[str, str] = {}
        reader, reading = ctx.readers.get() if self.fact_reader else None, None
        if self.retrieve:
            trajectory.intents = self._intents(ctx, asked)
            passages = self._passages(ctx, trajectory.intents)
            if reader is not None:
                passages, trajectory.judgements, reading = reader_locate(
                    reader, ctx.trace, asked, passages
                )
            trajectory.passages = [(p.title, p.text) for p in passages]
            facts = self._facts(ctx, asked, passages, trajectory)
            located = note_facts(ctx, passages, [(n, fact) for n, _title, fact in facts])
        try:
            text, numbers = roles.generate(ctx, asked, facts, self.max_answer_tokens)
        except ParseError as exc:
            ctx.trace.note("smart", f"generator failed: {exc.reason}; no answer")
            text, numbers = "", []
        trajectory.answer, trajectory.citations = text, numbers
        ctx.trace.note(
            "smart", "trajectory in SMART's format", trajectory=render_trajectory(trajectory)
        )
        cited = [passages[n - 1] for n in numbers if 0 < n <= len(passages)]
        evidence = _said_evidence(reading, passages, text, reader)
        return Answer(
            question,
            text,
            self.name,
            [Citation.of(p) for p in cited],
            ctx.trace,
            evidence=evidence,
            facts=located,
        )

    def _mode(self, ctx: Context) -> tuple[str, ChatModel | None]:
        """The mode that runs, and the model playing the trajectory; noted in the trace."""
        if self.mode == "modular":
            ctx.trace.note("smart", "mode=modular (asked for)", event="mode", mode="modular")
            return "modular", None
        given = ctx.role_models.get(ROLE_MODEL)
        if self.mode == "trajectory":
            model = given or ctx.model
            adapter = adapter_of(model)
            ctx.trace.note(
                "smart",
                "mode=trajectory (asked for)",
                event="mode",
                mode="trajectory",
                adapter=adapter.name if adapter else "",
            )
            return "trajectory", model
        choice = choose(ctx.model, given)
        ctx.trace.note(
            "smart",
            f"mode=auto ran {choice.mode}: {choice.why}"
            + (f" (adapter {choice.adapter})" if choice.adapter else ""),
            event="mode",
            mode=choice.mode,
            adapter=choice.adapter,
        )
        return choice.mode, choice.model

    def _calibration(self, ctx: Context, model: ChatModel | None) -> LabelCalibration | None:
        """The label calibration of the trajectory model's adapter (noted in the trace)."""
        adapter = adapter_of(model or ctx.model_for(ROLE_MODEL))
        if not self.label_calibration or adapter is None:
            return None
        found = load_calibration(adapter)
        if found is not None:
            ctx.trace.note(
                "smart",
                f"label calibration {found.path.name} (labelled formats)",
                event="label_calibration",
                path=str(found.path),
            )
        return found

    def _reranker(self, ctx: Context) -> Reranker | None:
        """The block's reranker, if one is named (noted in the trace)."""
        if not self.reranker:
            return None
        found = load_reranker(Path(self.reranker).expanduser())
        ctx.trace.note("smart", f"block ordered by {found.identity}", event="rerank")
        return found

    def _run_trajectory(
        self, posed: Posed, asked: str, ctx: Context, model: ChatModel | None
    ) -> Answer:
        settings = TrajectorySettings(
            self.k,
            self.max_intents,
            self.max_passages,
            self.max_answer_tokens,
            with_question=self.with_question is not False,
            locator_bias=self.locator_bias,
            fill_block=self.fill_block,
            locator_grammar=self.locator_grammar,
            calibration=self._calibration(ctx, model),
            reranker=self._reranker(ctx),
            reader=ctx.readers.get() if self.fact_reader else None,
        )
        ran = run_trajectory(posed, ctx, settings, model, asked)
        trajectory, passages = ran.trajectory, ran.passages
        note_trajectory(ctx.trace, trajectory, passages)
        ctx.retrieved.show(passages)
        relevant = [(j.index, j.fact) for j in trajectory.judgements if j.relevant]
        located = note_facts(ctx, passages, relevant)
        cited = [passages[n - 1] for n in trajectory.citations]
        evidence = _said_evidence(ran.reading, passages, trajectory.answer, settings.reader)
        return Answer(
            posed.text,
            trajectory.answer,
            self.name,
            [Citation.of(p) for p in cited],
            ctx.trace,
            evidence=evidence,
            facts=located,
        )

    def _intents(self, ctx: Context, question: str) -> list[str]:
        if not self.reconstructor:
            return [question]
        try:
            intents = roles.reconstruct(ctx, question, self.max_intents)
        except ParseError as exc:
            ctx.trace.note("smart", f"reconstructor failed ({exc.reason}); using the question")
            return [question]
        if self.with_question:  # None (auto) is off in modular mode
            intents = [question, *(i for i in intents if i.strip().lower() != question.lower())]
        return intents or [question]

    def _passages(self, ctx: Context, intents: list[str]) -> list[Passage]:
        found = roles.gather_passages(
            ctx.require_index(self.name), ctx.trace, ctx.retrieved, intents, self.k
        )
        locator = roles.LOCATOR.model(ctx)
        room = locator.context_length // 2  # one passage must fit a locator prompt easily
        return [dataclasses.replace(p, text=fit_text(locator, p.text, room)[0]) for p in found]

    def _facts(
        self, ctx: Context, question: str, passages: list[Passage], trajectory: Trajectory
    ) -> list[tuple[int, str, str]]:
        """(number, title, text) for the generator: located facts, plus raw passages the
        locator could not judge (or all raw passages without a locator)."""
        numbered = list(enumerate(passages, start=1))
        if trajectory.judgements:  # located by the reader
            found = [(j.index, j.title, j.fact) for j in trajectory.judgements if j.relevant]
            return self._fit(ctx, found)
        if not self.locator:
            return self._fit(ctx, [(n, p.title, p.text) for n, p in numbered])
        facts: list[tuple[int, str, str]] = []
        for n, p in numbered:
            try:
                located = roles.locate(ctx, question, n, p, self.snap_facts)
            except ParseError as exc:
                ctx.trace.note("smart", f"locator failed on [{n}] ({exc.reason}); passing it raw")
                facts.append((n, p.title, p.text))
                continue
            trajectory.judgements.append(
                Judgement(n, p.title if located.relevant else "", located.relevant, located.fact)
            )
            if located.relevant:
                facts.append((n, p.title, located.fact))
        return self._fit(ctx, facts)

    def _fit(self, ctx: Context, facts: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
        budget = roles.GENERATOR.model(ctx).context_length - self.max_answer_tokens - 400
        as_passages = [Passage(str(n), title, text) for n, title, text in facts]
        fitted = fit_passages(ctx, as_passages, budget, roles.GENERATOR.name)
        return [(int(p.id), p.title, p.text) for p in fitted]


def _said_evidence(
    reading: Reading | None, passages: list[Passage], answer: str, reader: Reader | None
) -> list[Evidence]:
    """The reader's spans that the answer says (none when the model located the facts)."""
    if reading is None or reader is None:
        return []
    found = evidence_of(reading, passages, reader)
    return [e for e in found if e.text and e.text in answer]


def note_facts(
    ctx: Context, passages: list[Passage], facts: list[tuple[int, str]]
) -> dict[str, str]:
    """The located facts by passage id (the answer carries them: a page highlights them),
    said in the trace."""
    found = {passages[n - 1].id: fact for n, fact in facts if 0 < n <= len(passages) and fact}
    if found:
        ctx.trace.note("smart", f"{len(found)} facts located", event="facts", facts=found)
    return found
