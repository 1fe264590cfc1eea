"""Fitting the follow-up model (`ragteam.followup.model`) on chains people wrote: each turn
after the first, with the standalone rewrite a person wrote for it (docqa-train's
conversations.jsonl layout: {"id", "turns": [{"question", "answers", "rewrite",
"standalone"}]}).

- `leans`: a follow-up that leans (1) or a fresh question (0): the chains' later turns marked
  `standalone`, and each chain's first question asked after another chain's turns;
- `carried`: every word the earlier turns said that the follow-up does not, carried (1) when
  the person's rewrite holds it. The threshold on its probability is the one whose carried
  words match the rewrites' best (F1 over the fitted turns)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ragteam.common.linear import fit_logistic, sigmoid
from ragteam.followup.model import FollowUps, candidates, lean_features, words

L2 = 1.0


def _context(turns: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    return [t["question"] for t in turns], [t["answers"][0] if t["answers"] else "" for t in turns]


def lean_rows(chains: list[dict[str, Any]]) -> tuple[list[list[float]], list[int]]:
    x, y = [], []
    for n, chain in enumerate(chains):
        turns = chain["turns"]
        for k in range(1, len(turns)):
            x.append(lean_features(turns[k]["question"], *_context(turns[:k])))
            y.append(int(not turns[k].get("standalone", False)))
        before = chains[n - 1]["turns"]  # a fresh question after another conversation
        x.append(lean_features(turns[0]["question"], *_context(before)))
        y.append(0)
    return x, y


def carry_rows(
    chains: list[dict[str, Any]],
) -> list[tuple[list[str], list[list[float]], list[int], set[str]]]:
    """Per leaning follow-up: its candidate words, their features, whether the rewrite holds
    each, and the words the rewrite carries that the question does not."""
    out = []
    for chain in chains:
        turns = chain["turns"]
        for k in range(1, len(turns)):
            if turns[k].get("standalone"):
                continue
            asked, rewrite = turns[k]["question"], turns[k]["rewrite"]
            kept = {w.lower() for w in words(rewrite)} - {w.lower() for w in words(asked)}
            found = candidates(asked, *_context(turns[:k]))
            if found:
                said = [w for w, _ in found]
                out.append(
                    (said, [f for _, f in found], [int(w.lower() in kept) for w in said], kept)
                )
    return out


def _f1(chosen: Iterable[str], wanted: set[str]) -> float:
    got = {w.lower() for w in chosen}
    if not got and not wanted:
        return 1.0
    both = len(got & wanted)
    return 0.0 if not both else 2 * both / (len(got) + len(wanted))


def fit_followups(chains: list[dict[str, Any]]) -> FollowUps:
    lx, ly = lean_rows(chains)
    leans = fit_logistic(np.asarray(lx), np.asarray(ly), L2)
    turns = carry_rows(chains)
    cx = np.asarray([f for _, rows, _, _ in turns for f in rows])
    cy = np.asarray([y for _, _, ys, _ in turns for y in ys])
    carried = fit_logistic(cx, cy, L2)
    best, at = -1.0, 0.5
    for threshold in np.arange(0.1, 0.9, 0.05):
        f1 = np.mean(
            [
                _f1(
                    [
                        w
                        for w, p in zip(
                            said, sigmoid(carried(np.asarray(rows, "float32"))), strict=True
                        )
                        if p >= threshold
                    ],
                    kept,
                )
                for said, rows, _, kept in turns
            ]
        )
        if f1 > best:
            best, at = float(f1), float(threshold)
    lean_p = sigmoid(leans(np.asarray(lx, "float32")))
    fitted = {
        "chains": len(chains),
        "lean_rows": len(ly),
        "lean_accuracy": float(np.mean((lean_p >= 0.5) == np.asarray(ly, bool))),
        "carry_rows": int(len(cy)),
        "carried_share": float(cy.mean()),
        "carry_f1": best,
        "l2": L2,
    }
    return FollowUps(leans, carried, at, fitted)
