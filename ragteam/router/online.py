"""Online routing: remember which action answered a question, learn from feedback."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ragteam.errors import InputError
from ragteam.metrics import f1_score
from ragteam.router.linucb import LinUCB
from ragteam.router.state import updating

MAX_PENDING = 10_000


def remember(state_path: str | Path, feedback_id: str, choice: dict[str, Any]) -> None:
    """Keep the action taken for a question until feedback arrives (oldest dropped past a cap)."""
    with updating(state_path) as state:
        state.pending[feedback_id] = {**choice, "created": time.time()}
        while len(state.pending) > MAX_PENDING:
            state.pending.pop(next(iter(state.pending)))


def give_feedback(
    state_path: str | Path,
    feedback_id: str,
    *,
    correct: bool | None = None,
    gold: str | None = None,
) -> float:
    """Score the remembered answer (right / wrong, or F1 against the given answer), turn it into
    the router's reward with the action's cost, and update LinUCB. Returns the reward."""
    with updating(state_path) as state:
        choice = state.pending.pop(feedback_id, None)
        if choice is None:
            raise InputError(
                f"no answer with feedback id '{feedback_id}' is waiting in {state_path}; "
                "feedback can be given once per answer of the adaptive strategy"
            )
        router = state.router()
        quality = f1_score(choice["answer"], [gold]) if gold is not None else float(bool(correct))
        reward = router.setup.reward(quality, float(choice["cost"]))
        model = LinUCB.from_dict(state.model)
        model.update(int(choice["action"]), choice["x"], reward)
        state.model = model.to_dict()
        state.updates += 1
    return reward
