"""Online routing: remember which action answered a question, learn from feedback."""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any

from ragteam.common.metrics import f1_score
from ragteam.errors import InputError
from ragteam.router.linucb import LinUCB
from ragteam.router.state import (
    _lock,
    append_pending,
    pending_log,
    read_pending,
    rewrite_pending,
    updating,
)

MAX_PENDING = 10_000


def remember(state_path: str | Path, feedback_id: str, choice: dict[str, Any]) -> None:
    """Keep the action taken for a question until feedback arrives: one line appended to the
    pending log (the state itself is not rewritten). Past twice the cap, the log is compacted
    to the newest `MAX_PENDING` waiting entries."""
    append_pending(state_path, {**choice, "id": feedback_id, "created": time.time()})
    log = pending_log(state_path)
    if log.stat().st_size > 2 * MAX_PENDING * 200:
        with _lock(Path(state_path)):
            waiting = read_pending(state_path)
            if len(waiting) > MAX_PENDING:
                waiting = dict(list(waiting.items())[-MAX_PENDING:])
            rewrite_pending(state_path, waiting)


def give_feedback(
    state_path: str | Path,
    feedback_id: str,
    *,
    correct: bool | None = None,
    gold: str | None = None,
) -> float:
    """Score the remembered answer (right / wrong, or F1 against the given answer), turn it into
    the router's reward with the action's cost, and update LinUCB. Returns the reward."""

    def mark_done() -> None:  # only once the update is on disk: feedback is never lost
        with pending_log(state_path).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"id": feedback_id, "done": True}) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    with updating(state_path, then=mark_done) as state:
        if feedback_id in state.applied:  # applied, then cut off before its entry was marked
            mark_done()
            raise InputError(f"the feedback '{feedback_id}' was already given to the router")
        choice = state.pending.pop(feedback_id, None) or read_pending(state_path).get(feedback_id)
        if choice is None:
            raise InputError(
                f"no answer with feedback id '{feedback_id}' is waiting in {state_path}; "
                "feedback can be given once per answer of the adaptive strategy"
            )
        router = state.router()
        try:
            quality = (
                f1_score(str(choice["answer"]), [gold])
                if gold is not None
                else float(bool(correct))
            )
            reward = router.setup.reward(quality, float(choice["cost"]))
            features = [float(v) for v in choice["x"]]
            if not all(math.isfinite(v) for v in [*features, reward]):
                raise ValueError("its features or cost are not finite numbers")
            model = LinUCB.from_dict(state.model)
            model.update(int(choice["action"]), features, reward)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise InputError(
                f"the waiting answer '{feedback_id}' is damaged in the pending log ({exc}); "
                "it cannot teach the router: ask again and give feedback on the new answer"
            ) from exc
        state.model = model.to_dict()
        state.updates += 1
        state.note_applied(feedback_id)
    return reward
