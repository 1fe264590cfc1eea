"""Fitting the verdicts (`ragteam train verdict`): the claim's logistic regression and the
options' softmax over the features of `ragteam.verdict.features`, read with the shipped span
reader and MiniLM over passages retrieved from the formats training corpus, as an answer
retrieves them. Training rows only; the held rows (by a hash of the row id) choose the L2
strength, the claim threshold, and whether the fitted claim decision beats the majority label.

Features are the slow part (the reader reads every row's passages): they are saved every
`CHUNK` rows beside the output (`OUT.features.npz`), so a stopped run resumes where it was."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from ragteam.common.linear import Linear, logistic, sigmoid, standardise
from ragteam.errors import InputError
from ragteam.formats import Posed
from ragteam.reader.training.data import held_out
from ragteam.verdict.features import claim_signals, option_signals
from ragteam.verdict.fitted import ChoiceDecision, ClaimDecision, Verdicts
from ragteam.verdict.train_settings import VerdictSettings

CHUNK = 100
L2 = (0.1, 1.0, 10.0, 100.0, 1000.0)


def fit_verdicts(
    data: Path,
    index_dir: Path,
    out: Path,
    settings: VerdictSettings,
    say: Callable[[str], None],
) -> Verdicts:
    """Read the rows' features (resuming saved ones), fit both decisions, write `out`."""
    from ragteam.reader import load_reader
    from ragteam.retrieval import load_index
    from ragteam.retrieval.encoder_registry import make_encoder
    from ragteam.retrieval.encoders import EncoderSpec

    started = time.perf_counter()
    claims = _rows(data / "claims_train.jsonl", settings.claims, settings.seed)
    choices = _rows(data / "multiple_choice_train.jsonl", settings.choices, settings.seed)
    index, reader = load_index(index_dir), load_reader()
    encoder = make_encoder(EncoderSpec())
    store = out.with_name(out.name + ".features.npz")
    saved = _load_store(store, reader.identity)

    def claim_row(row: dict) -> np.ndarray:
        found = index.retrieve(row["question"], settings.k)
        return claim_signals(row["question"], found, reader, encoder).values

    def choice_rows(row: dict) -> np.ndarray:
        # searched as `read` searches a posed question: the stem, then the options
        found = index.retrieve(Posed(row["question"], row["choices"] or {}).search, settings.k)
        texts = list(row["choices"].values())
        return option_signals(row["question"], texts, found, reader, encoder)

    x_claims = _features("claims", claims, claim_row, saved, store, reader.identity, say)
    x_choices = _features("choices", choices, choice_rows, saved, store, reader.identity, say)
    claim = _fit_claims(claims, x_claims, settings.held_share)
    choice = _fit_choices(choices, x_choices, settings.held_share)
    card = {
        "data": str(data),
        "index": str(index_dir),
        "settings": asdict(settings),
        "seconds": round(time.perf_counter() - started, 1),
    }
    verdicts = Verdicts(claim, choice, reader.identity, card)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(verdicts.to_json(), encoding="utf-8")
    tmp.replace(out)
    return verdicts


def _rows(path: Path, n: int, seed: int) -> list[dict]:
    if not path.is_file():
        raise InputError(f"{path} is missing: --data names the formats training folder")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    random.Random(seed).shuffle(rows)
    return rows[:n]


def _load_store(store: Path, reader: str) -> dict[str, list[np.ndarray]]:
    """Rows read before (with their ids), if read with this reader."""
    if not store.is_file():
        return {}
    with np.load(store, allow_pickle=False) as data:
        if str(data["reader"]) != reader:
            return {}  # read with another reader: start over
        return {
            name: list(zip(data[f"{name}_ids"].tolist(), _rows_of(data, name), strict=True))
            for name in ("claims", "choices")
            if f"{name}_n" in data and f"{name}_ids" in data  # rows without ids: read again
        }


def _rows_of(data: Any, name: str) -> list[np.ndarray]:
    return [data[f"{name}_{i}"] for i in range(int(data[f"{name}_n"]))]


def _save_store(store: Path, saved: dict[str, list], reader: str) -> None:
    arrays: dict[str, np.ndarray] = {"reader": np.array(reader)}
    for name, rows in saved.items():
        arrays[f"{name}_n"] = np.array(len(rows))
        arrays[f"{name}_ids"] = np.array([rid for rid, _ in rows])
        arrays.update({f"{name}_{i}": r for i, (_, r) in enumerate(rows)})
    tmp = store.with_name(store.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    tmp.replace(store)


def _features(name, rows, featurize, saved, store, reader, say) -> list[np.ndarray]:  # noqa: ANN001
    """Every row's features, in order: those read before (for the same rows) are kept."""
    before = saved.get(name, [])
    ids = [r["id"] for r in rows]
    kept = 0
    while kept < min(len(before), len(rows)) and before[kept][0] == ids[kept]:
        kept += 1
    done = saved[name] = before[:kept]
    if done:
        say(f"{name}: {len(done)} of {len(rows)} rows read before, resuming")
    started = time.perf_counter()
    for i in range(kept, len(rows)):
        done.append((ids[i], featurize(rows[i])))
        if (i + 1) % CHUNK == 0 or i + 1 == len(rows):
            _save_store(store, saved, reader)
            rate = (time.perf_counter() - started) / (i + 1 - kept)
            say(f"{name}: {i + 1}/{len(rows)} rows read ({rate:.2f} s/row)")
    return [features for _, features in done]


def _split(rows: list[dict], share: float) -> tuple[list[int], list[int]]:
    held = [i for i, r in enumerate(rows) if held_out(r["id"], share)]
    chosen = set(held)
    train = [i for i in range(len(rows)) if i not in chosen]
    if len(held) < 2 or len(train) < 2:
        raise InputError(
            f"{len(rows)} rows give {len(train)} to fit and {len(held)} to choose by: read more "
            "rows (--claims, --choices)"
        )
    return train, held


def _fit_claims(rows: list[dict], features: list[np.ndarray], share: float) -> ClaimDecision:
    x = np.stack(features).astype("float64")
    y = np.array([r["label"] == "true" for r in rows], dtype="float64")
    train, held = _split(rows, share)
    mean, scale = standardise(x[train])
    z = (x - mean) / scale
    majority = "true" if y[train].mean() >= 0.5 else "false"
    best: tuple[float, float, float, np.ndarray] | None = None  # accuracy, l2, threshold, w
    for l2 in L2:
        w = logistic(z[train], y[train], l2)
        p = sigmoid(z[held] @ w[:-1] + w[-1])
        for threshold in np.linspace(0.3, 0.7, 41):
            accuracy = float(((p >= threshold) == (y[held] == 1)).mean())
            if best is None or accuracy > best[0]:
                best = (accuracy, l2, float(threshold), w)
    assert best is not None
    accuracy, l2, threshold, w = best
    base = float((y[held] == (majority == "true")).mean())
    linear = Linear(w[:-1].tolist(), float(w[-1]), mean.tolist(), scale.tolist())
    held_report = {"accuracy": accuracy, "majority": base, "rows": len(held), "l2": l2}
    return ClaimDecision(linear, threshold, majority, accuracy <= base, held_report)


def _fit_choices(rows: list[dict], features: list[np.ndarray], share: float) -> ChoiceDecision:
    train, held = _split(rows, share)
    gold = [list(r["choices"]).index(r["label"]) for r in rows]
    mean, scale = standardise(np.concatenate([features[i] for i in train]).astype("float64"))
    z = [(f - mean) / scale for f in features]
    best: tuple[float, float, np.ndarray] | None = None
    for l2 in L2:
        w = _conditional_logit([z[i] for i in train], [gold[i] for i in train], l2)
        accuracy = float(np.mean([int(np.argmax(z[i] @ w)) == gold[i] for i in held]))
        if best is None or accuracy > best[0]:
            best = (accuracy, l2, w)
    assert best is not None
    accuracy, l2, w = best
    chance = float(np.mean([1 / len(rows[i]["choices"]) for i in held]))
    linear = Linear(w.tolist(), 0.0, mean.tolist(), scale.tolist())
    return ChoiceDecision(
        linear, {"accuracy": accuracy, "chance": chance, "rows": len(held), "l2": l2}
    )


def _conditional_logit(
    groups: list[np.ndarray], gold: list[int], l2: float, steps: int = 25
) -> np.ndarray:
    """Softmax over each question's options with shared weights, by Newton's method."""
    w = np.zeros(groups[0].shape[1])
    for _ in range(steps):
        grad = l2 * w
        hess = l2 * np.eye(len(w))
        for x, g in zip(groups, gold, strict=True):
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            grad += x.T @ p - x[g]
            mean = p @ x
            hess += (x * p[:, None]).T @ x - np.outer(mean, mean)
        w -= np.linalg.solve(hess, grad)
    return w
