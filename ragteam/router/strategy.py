"""`adaptive`: a trained router picks which strategies answer a question; they vote."""

from __future__ import annotations

import hashlib
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import ClassVar

from ragteam.errors import InputError
from ragteam.formats import Posed
from ragteam.router.table import Question
from ragteam.router.vote import Ballot, majority_vote
from ragteam.trace import Step, Trace, Writing
from ragteam.types import Answer


def feedback_id(question: str) -> str:
    return hashlib.sha256(question.encode("utf-8")).hexdigest()[:12]


@dataclass
class Adaptive:
    """Learns which strategies answer which kind of question best, runs those and lets them
    vote; your feedback on its answers teaches it.

    Loads the router state (`state`, default: the user data dir), picks an action by upper
    confidence bound (`explore`) or by estimated reward, runs the action's strategies (in
    parallel where the model allows), votes, and remembers the choice for `ragteam feedback`."""

    name: ClassVar[str] = "adaptive"
    calls_strategies: ClassVar[bool] = True  # its roles are those of the strategies it calls
    roles: ClassVar[tuple[str, ...]] = ()  # the roles of the strategies it routes to
    needs_index: ClassVar[bool] = True
    needs_model: ClassVar[bool] = True
    decides_verdicts: ClassVar[bool] = False
    state: str = ""
    explore: bool = True

    @staticmethod
    def unavailable(options: dict[str, object]) -> str:
        """Why this strategy cannot answer with these options ('' when it can): no router
        state has been trained yet."""
        from pathlib import Path

        from ragteam.router.state import default_state_path

        path = Path(str(options.get("state") or default_state_path()))
        if path.is_file():
            return ""
        return "no trained router yet (train one with `ragteam router train`, then serve it)"

    def run(self, posed: Posed, ctx) -> Answer:  # noqa: ANN001 - Context (import cycle)
        question = posed.text
        from ragteam.router.online import remember
        from ragteam.router.state import default_state_path, load_state

        path = self.state or str(default_state_path())
        router = load_state(path).router()
        if router.features.to_dict()["name"] != "question":  # oracle labels are not live
            raise InputError(
                f"the router in {path} routes on oracle labels, which live questions lack; "
                "train it with `ragteam router train --features question`"
            )
        x = router.features(Question("live", question, (), None))
        action = (
            router.model.select(x)
            if self.explore
            else router.choose(Question("live", question, (), None))
        )
        agents = router.actions[action]
        runs = self._run_agents(posed, agents, ctx, router.setup.agent_options)
        answers = [ans for ans, _wall in runs]
        ballots = [
            Ballot(a, ans.text, _cost(ans.trace, wall, router.setup.reward.cost))
            for a, (ans, wall) in zip(agents, runs, strict=True)
        ]
        winner = majority_vote(ballots, router.setup.tie_break, router.setup.normalize_votes)
        cost = sum(b.cost for b in ballots)
        fid = feedback_id(question)
        ctx.trace.note(
            "router",
            f"chose {'+'.join(agents)}; vote -> {winner.answer!r}",
            action=list(agents),
            feedback_id=fid,
            cost=cost,
            ballots=[(b.agent, b.answer) for b in ballots],
        )
        remember(path, fid, {"action": action, "x": list(x), "cost": cost, "answer": winner.answer})
        chosen = answers[agents.index(winner.agent)]
        return Answer(
            question, winner.answer, self.name, chosen.citations, ctx.trace, feedback_id=fid
        )

    def _run_agents(
        self,
        posed: Posed,
        agents: tuple[str, ...],
        ctx,  # noqa: ANN001 - Context (import cycle)
        options: dict[str, dict],
    ) -> list[tuple[Answer, float]]:
        """Each agent's answer and wall seconds (the unit the router was trained on), run
        with the options its logged outcomes were made with."""
        from ragteam.strategies.registry import make_strategy

        def one(agent: str) -> tuple[Answer, float]:
            if agent == self.name:
                raise InputError("the adaptive strategy cannot be one of its own agents")

            def forward(step: Step) -> None:  # into the answer's trace as it happens
                step.role = f"{agent}/{step.role}"
                ctx.trace.add(step)

            def writing(part: Writing) -> None:  # an agent's answer is not yet the answer
                if ctx.trace.on_writing is not None:
                    ctx.trace.on_writing(replace(part, role=f"{agent}/{part.role}", answer=None))

            sub = Trace(on_step=forward, on_writing=writing, parent=ctx.trace)
            started = time.perf_counter()
            result = make_strategy(agent, options.get(agent, {})).run(
                posed,
                replace(ctx, trace=sub),  # its passages are the answer's too
            )
            return result, time.perf_counter() - started

        if ctx.model.parallel and len(agents) > 1:
            with ThreadPoolExecutor(max_workers=len(agents)) as pool:
                return list(pool.map(one, agents))
        return [one(a) for a in agents]


def _cost(trace: Trace | None, wall_seconds: float, kind: str) -> float:
    """An agent's cost in the router's unit: wall seconds, as training measured them from
    eval rows (`wall_seconds`), tokens or calls from the trace."""
    from ragteam.router.table import AgentOutcome

    t = trace.totals() if trace else {}
    tokens = t.get("prompt_tokens", 0) + t.get("completion_tokens", 0)
    outcome = AgentOutcome("", wall_seconds, tokens, t.get("llm_calls", 0))
    return outcome.cost(kind)  # type: ignore[arg-type]
