"""Passages of a training trajectory in a seeded random order.

Retrieval puts the best hit first, and the question's best hit is usually a gold paragraph: in
the hybrid-index build of every training file (bench/out/traj-v4) passage [1] is relevant in
65% of trajectories, and the locator trained on it learned the position instead of the text —
on 100 dev300 questions adapters v4 and v5 judged exactly passage [1] relevant every time
(docs/benchmarks.md section 20). Shuffling each block (renumbering the judgements and the
generator's citations with it) leaves position no signal to learn; inference keeps retrieval's
order.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import replace
from typing import Any

from ragteam.smart.format import Judgement, Trajectory
from ragteam.smart.training.build import Item


def shuffled(t: Trajectory, order: list[int]) -> Trajectory:
    """`t` with passage `order[k]` (0-based) shown as [k+1]; judgements and citations follow
    their passages."""
    new_index = {old + 1: new + 1 for new, old in enumerate(order)}
    judgements = sorted(
        (replace(j, index=new_index[j.index]) for j in t.judgements), key=lambda j: j.index
    )
    return Trajectory(
        intents=list(t.intents),
        passages=[t.passages[old] for old in order],
        judgements=judgements,
        answer=t.answer,
        citations=sorted(new_index[c] for c in t.citations),
    )


def shuffle_item(item: Item, seed: int) -> Item:
    """The item with its block in a random order seeded by `seed` and its id (the same on every
    run, independent of the other items); its passage ids follow their passages."""
    digest = hashlib.blake2b(f"{seed}:{item.id}".encode(), digest_size=8).digest()
    order = list(range(len(item.trajectory.passages)))
    random.Random(int.from_bytes(digest, "big")).shuffle(order)
    ids = item.passage_ids
    return replace(
        item,
        trajectory=shuffled(item.trajectory, order),
        passage_ids=[ids[old] for old in order] if len(ids) == len(order) else list(ids),
    )


def item_from_dict(data: dict[str, Any]) -> Item:
    """An `items.jsonl` row back as an Item."""
    t = data["trajectory"]
    trajectory = Trajectory(
        intents=list(t["intents"]),
        passages=[(str(a), str(b)) for a, b in t["passages"]],
        judgements=[Judgement(**j) for j in t["judgements"]],
        answer=t["answer"],
        citations=list(t["citations"]),
    )
    return Item(**{**data, "trajectory": trajectory})
