"""Fit the trained agent's per-label biases (multiple choice, true/false claims) on *training*
rows, and write them beside the adapter (`ADAPTER.labels.json`, read by `smart`).

    python bench/label_calibration.py bench/out/traj-v4 --adapter ragteam/data/smart-135m-lora.gguf

For every training-split generator example of a labelled format (a `train build` folder's
short.jsonl), the prompt up to `<|Generator|>:` is read teacher-forced with llama.cpp over the
embedded GGUF and the adapter (the model and numbers inference uses), and the log-probability of
each label's first token is kept. The biases maximise accuracy on those rows (one for "true"
against "false"; one per option label by coordinate ascent); a two-fold estimate (fit on one
half, score the other) says how much of the gain is real: a format's biases are kept only when
that estimate beats the uncalibrated accuracy. A test set never picks them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
from teacher_forced import agent, arguments

GRID = np.round(np.arange(-6.0, 6.0001, 0.1), 2)


def rows_of(data: Path, per_format: int, seed: int) -> list[dict]:
    """Training-split generator examples of labelled formats, with their item's gold label."""
    from ragteam.formats import posed_format

    items = {}
    with (data / "items.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            item = json.loads(line)
            if item["split"] == "train" and item["format"] in ("multiple_choice", "claim"):
                items[item["id"]] = item
    found: dict[str, list[dict]] = {"multiple_choice": [], "claim": []}
    with (data / "short.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            ex = json.loads(line)
            item = items.get(ex["id"].rsplit("/", 1)[0])
            if ex["role"] != "generator" or item is None:
                continue
            fmt, labels = posed_format(item["posed"])
            gold = item["answers"][0]
            if fmt == item["format"] and gold in labels:
                found[fmt].append(
                    {
                        "prompt": ex["text"][: ex["prompt_chars"]],
                        "format": fmt,
                        "labels": labels,
                        "gold": gold,
                    }
                )
    rng = random.Random(seed)
    return [r for rows in found.values() for r in rng.sample(rows, min(per_format, len(rows)))]


def score(llm, rows: list[dict]) -> None:
    """Adds each row's label log-probabilities at the answer position (teacher-forced)."""
    from ragteam.agents.smart_labels import first_token

    def tokenize(text: str) -> list[int]:
        return llm.tokenize(text.encode(), add_bos=False, special=False)

    for n, row in enumerate(rows, start=1):
        if n % 50 == 0:
            print(f"scored {n}/{len(rows)}", flush=True)
        tokens = llm.tokenize(row["prompt"].encode(), add_bos=True, special=True)
        llm.reset()
        llm.eval(tokens)
        last = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))
        logits = last.astype(np.float64)  # the last position's (logits_all is off)
        logp = logits - logits.max() - np.log(np.exp(logits - logits.max()).sum())
        row["logp"] = {label: float(logp[first_token(tokenize, label)]) for label in row["labels"]}


def accuracy(rows: list[dict], bias: dict[str, float]) -> float:
    right = 0
    for row in rows:
        said = max(row["labels"], key=lambda lab: row["logp"][lab] + bias.get(lab, 0.0))
        right += said == row["gold"]
    return right / max(1, len(rows))


def fit(rows: list[dict], rounds: int = 4) -> dict[str, float]:
    """Biases maximising accuracy, coordinate by coordinate (the first label stays at 0; ties
    keep the smaller bias)."""
    labels = sorted({lab for r in rows for lab in r["labels"]})
    bias = dict.fromkeys(labels, 0.0)
    for _ in range(rounds):
        for label in labels[1:]:
            best = max(GRID, key=lambda b: (accuracy(rows, {**bias, label: float(b)}), -abs(b)))
            bias[label] = float(best)
    return bias


def two_fold(rows: list[dict], seed: int) -> float:
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    halves = [[rows[i] for i in order[::2]], [rows[i] for i in order[1::2]]]
    scores = [accuracy(halves[1 - n], fit(halves[n])) for n in (0, 1)]
    return sum(s * len(halves[1 - n]) for n, s in enumerate(scores)) / len(rows)


def fit_formats(
    rows: list[dict], formats: tuple[str, ...], seed: int
) -> tuple[dict[str, dict[str, float]], dict[str, dict]]:
    """Per format: the fitted biases, kept only where fitting on one half helps the other (else
    the gain is noise), and what was measured."""
    biases, report = {}, {}
    for fmt in formats:
        mine = [r for r in rows if r["format"] == fmt and r["gold"] in r["labels"]]
        if not mine:
            continue
        fitted = fit(mine)
        golds = [r["gold"] for r in mine]
        held = two_fold(mine, seed)
        kept = held > accuracy(mine, {})
        if kept:
            biases[fmt] = {label: b + 0.0 for label, b in fitted.items()}  # no -0.0
        report[fmt] = {
            "kept": kept,
            "rows": len(mine),
            "gold_labels": {lab: golds.count(lab) for lab in sorted(set(golds))},
            "accuracy_before": round(accuracy(mine, {}), 3),
            "accuracy_fitted": round(accuracy(mine, fitted), 3),
            "accuracy_two_fold": round(held, 3),
            "majority_label_share": round(max(map(golds.count, set(golds))) / len(golds), 3),
            "fitted": fitted,
        }
    return biases, report


def main() -> None:
    parser = arguments(__doc__, threads=2)
    parser.add_argument("--per-format", type=int, default=400, help="rows per format (seeded)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from ragteam.agents.smart_labels import calibration_path
    from ragteam.atomic import write_json
    from ragteam.llm.gguf_files import gguf_fingerprint

    llm = agent(args.adapter, args.threads, every_logit=False)
    rows = rows_of(args.data, args.per_format, args.seed)
    score(llm, rows)
    biases, report = fit_formats(rows, ("multiple_choice", "claim"), args.seed)
    out = calibration_path(args.adapter)
    write_json(
        out,
        {
            "adapter": gguf_fingerprint(args.adapter),
            "biases": biases,
            "fitted_on": {"data": str(args.data), "seed": args.seed, **report},
        },
    )
    print(json.dumps({"written": str(out), "biases": biases, **report}, indent=1))


if __name__ == "__main__":
    main()
