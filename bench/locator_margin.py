"""How the trained SMART locator decides "[Relevant]" against "[Irrelevant]", on held-out
*training* questions (never a test set): its logit margin at every judgement of the gold
trajectories, and the recall/precision of "relevant" if a bias were added to that margin.

    python bench/locator_margin.py bench/out/traj-all --adapter ragteam/data/smart-135m-lora.gguf

The margin is read teacher-forced (each judgement follows the gold text before it) with
llama.cpp over the embedded GGUF and the adapter: the model and the numbers inference uses. The
bias that maximises F1 of "relevant" on these questions is what `smart`'s `locator_bias` option
would be set to; a dev set never picks it.
"""

from __future__ import annotations

import json

import numpy as np
from teacher_forced import agent, arguments

RELEVANT, IRRELEVANT = "[Relevant]", "[Irrelevant]"


def margins(llm, text: str, prompt_chars: int) -> list[tuple[float, bool]]:
    """(logit margin Relevant - Irrelevant, gold is relevant) at each judgement of `text`."""
    cut = text.index("<|Locator|>:", prompt_chars)
    head, body = text[:cut], text[cut:]
    tokens = llm.tokenize(head.encode(), add_bos=True, special=True)
    tokens += llm.tokenize(body.encode(), add_bos=False, special=True)
    rel = llm.tokenize(b"[Relevant]", add_bos=False, special=False)
    irr = llm.tokenize(b"[Irrelevant]", add_bos=False, special=False)
    assert rel[0] == irr[0], "both judgements start with the same '[' token"
    llm.reset()
    llm.eval(tokens)
    scores = llm.scores[: len(tokens)]
    start = len(llm.tokenize(head.encode(), add_bos=True, special=True))
    found = []
    for n in range(start, len(tokens) - 1):
        if tokens[n] == rel[0] and tokens[n + 1] in (rel[1], irr[1]):
            logits = scores[n]  # predicts token n + 1
            found.append((float(logits[rel[1]] - logits[irr[1]]), tokens[n + 1] == rel[1]))
    return found


def table(points: list[tuple[float, bool]], biases: list[float]) -> list[dict[str, float]]:
    margin = np.array([m for m, _ in points])
    gold = np.array([g for _, g in points])
    rows = []
    for b in biases:
        said = margin + b > 0
        tp = int((said & gold).sum())
        recall = tp / max(1, int(gold.sum()))
        precision = tp / max(1, int(said.sum()))
        f1 = 2 * recall * precision / max(1e-9, recall + precision)
        rows.append({"bias": b, "recall": recall, "precision": precision, "f1": f1})
    return rows


def main() -> None:
    args = arguments(__doc__, threads=1).parse_args()
    llm = agent(args.adapter, args.threads)
    points: list[tuple[float, bool]] = []
    with (args.data / "long.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            example = json.loads(line)
            if example["split"] == "validation":
                points += margins(llm, example["text"], example["prompt_chars"])
    rows = table(points, [x / 2 for x in range(-4, 17)])
    best = max(rows, key=lambda r: r["f1"])
    print(json.dumps({"judgements": len(points), "relevant": sum(g for _, g in points)}))
    for r in rows:
        print(" ".join(f"{k} {v:.3f}" for k, v in r.items()))
    print(f"best bias by F1 of relevant: {best['bias']}")


if __name__ == "__main__":
    main()
