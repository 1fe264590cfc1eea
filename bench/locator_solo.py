"""Does the trained SMART agent read a passage's text when it stands alone? On held-out
*training* trajectories (never a test set), each passage of a block is shown by itself as [1]
and the locator's first logit margin ("[Relevant]" - "[Irrelevant]") is read. Position cannot
help there: every passage is [1]. Printed: the AUC of that margin against the gold judgements,
and how often the block's first passage is a relevant one in retrieval order against the order
of the margins (the agent answers from [1]: benchmarks section 20a).

    python bench/locator_solo.py bench/out/traj-v4 --adapter ragteam/data/smart-135m-lora.gguf
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
from teacher_forced import arguments

from ragteam.llm import ModelOptions, load_model
from ragteam.smart.format import (
    LOCATOR,
    parse,
    render_reconstructor,
    render_retrieval,
)


def solo_margins(
    model, prompt: str, intents: list[str], passages: list[tuple[str, str]]
) -> list[float]:
    """The first judgement's margin with each passage alone in the block (log-probabilities
    differ from logits by one constant per position: the margin is the same)."""
    rel, irr = model.tokenize("[Relevant]"), model.tokenize("[Irrelevant]")
    assert rel[0] == irr[0], "both judgements start with the same '[' token"
    out = []
    for passage in passages:
        head = prompt + render_reconstructor(intents) + render_retrieval([passage]) + LOCATOR
        logp = model.next_logprobs(head, then=[rel[0]])
        out.append(float(logp[rel[1]] - logp[irr[1]]))
    return out


def auc(scores: list[float], gold: list[bool]) -> float:
    pos = [s for s, g in zip(scores, gold, strict=True) if g]
    neg = [s for s, g in zip(scores, gold, strict=True) if not g]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def main() -> None:
    args = arguments(__doc__, threads=2).parse_args()
    options = ModelOptions(n_ctx=4096, n_threads=args.threads, lora=args.adapter, merge_lora=False)
    llm = load_model("embedded", replace(options, cache=False))
    scores: list[float] = []
    gold: list[bool] = []
    first = {"retrieval": 0, "margin": 0}
    blocks = 0
    with (args.data / "long.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            example = json.loads(line)
            if example["split"] != "validation":
                continue
            t = parse(example["text"])
            labels = {j.index: j.relevant for j in t.judgements}
            if not t.passages or not any(labels.values()):
                continue
            prompt = example["text"][: example["prompt_chars"]]
            margins = solo_margins(llm, prompt, t.intents, t.passages)
            marks = [labels.get(n, False) for n in range(1, len(t.passages) + 1)]
            scores += margins
            gold += marks
            blocks += 1
            first["retrieval"] += marks[0]
            first["margin"] += marks[int(np.argmax(margins))]
    print(json.dumps({"blocks": blocks, "passages": len(gold), "relevant": sum(gold)}))
    print(f"AUC of the solo margin: {auc(scores, gold):.3f}")
    for k, v in first.items():
        print(f"first passage relevant, {k} order: {v}/{blocks} = {v / max(1, blocks):.3f}")


if __name__ == "__main__":
    main()
