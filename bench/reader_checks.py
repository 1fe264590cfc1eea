"""Small measurements of reader weights that docs/benchmarks.md §35 reports:

# the demo corpus's questions, each reader's best span over BM25's top 5
python bench/reader_checks.py demo --weights A.safetensors B.safetensors
# weights interpolated (WiSE-FT, Wortsman et al. 2022): (1 - SHARE) * A + SHARE * B, half and
# half by default; calibrate them before use
python bench/reader_checks.py soup A.safetensors B.safetensors --out SOUP.safetensors [--share 0.5]
# the last step's weights of a run, from its checkpoint (a run keeps those of its best held
# score; this writes the last step's, in the same format)
python bench/reader_checks.py last RUN/reader-minilm.safetensors.ckpt --out LAST.safetensors
# on the document benchmark: how the reader's confidence ranks right over wrong answers,
# and what each threshold would decline (analysis only: thresholds are fitted on held
# training groups, never here)
python bench/reader_checks.py confidence --work /tmp/docqa --index /tmp/docqa4/ix
# the three thresholds and the confidence model fitted again on held groups (`train reader
# --groups`), written beside the weights (§36: the gate fitted on held questions asked of a
# folder; §45: the confidence model)
python bench/reader_checks.py calibrate --groups GROUPS.jsonl.gz --weights W.safetensors"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from ragteam.common.metrics import f1_score, match
from ragteam.reader.read import load_reader
from ragteam.retrieval import build_index, load_index

EXTRA = {"question": "Who built the Wrenhold Lighthouse?", "answers": ["Emrik Tollan"]}


def demo(weights: list[Path]) -> None:
    from ragteam.commands.demo import demo_corpus_path, demo_questions

    out = Path(tempfile.mkdtemp()) / "bm25"
    build_index(demo_corpus_path(), out, retriever="bm25")
    index = load_index(out)
    readers = {w: load_reader(w) for w in weights}
    right = dict.fromkeys(weights, 0)
    questions = [*demo_questions(), EXTRA]
    for q in questions:
        hits = index.retrieve(q["question"], k=5)
        said = []
        for w, reader in readers.items():
            best = reader.read(q["question"], hits, top=3).best
            text = best.text if best else ""
            right[w] += q is not EXTRA and f1_score(text, q["answers"]) == 1.0
            said.append(repr(text[:50]))
        print(q["question"][:60], "|", q["answers"][0], "|", " | ".join(said))
    for w in weights:
        print(f"{w}: {right[w]} of {len(questions) - 1} demo questions right")


def soup(a: Path, b: Path, out: Path, share: float = 0.5) -> None:
    import torch
    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    first, second = load_file(str(a)), load_file(str(b))
    with safe_open(str(b), "pt") as f:
        meta = {k: v for k, v in f.metadata().items() if k in ("format", "line_mark")}
    meta["made"] = f"{1 - share:g} * {a.name} + {share:g} * {b.name}"
    mixed = {
        k: ((1 - share) * first[k].float() + share * second[k].float()).to(torch.float16)
        for k in second
    }
    save_file(mixed, str(out), metadata=meta)
    print(f"wrote {out}; calibrate it (reader_calibration.calibrate) before reading with it")


def last(ckpt: Path, out: Path) -> None:
    import torch

    from ragteam.reader.model import LINE_MARK, SpanNet
    from ragteam.reader.training.train import save_weights

    saved = torch.load(ckpt, weights_only=False, map_location="cpu")
    settings = saved["settings"]
    marks = LINE_MARK if settings.get("line_marks", True) else ""
    net = SpanNet(1, marks, "cpu", "path" if settings.get("headings") else "")
    net.load_changed(saved["weights"])
    state = saved["state"]
    held = state["history"][-1] if state["history"] else {}
    kept = {k: f"{held[k]:.4f}" for k in ("loss", "em", "f1") if k in held}
    save_weights(net, out, {"step": str(state["step"]), **kept})
    print(f"wrote {out}: step {state['step']}, held {kept}; calibrate it before reading with it")


def confidence(work: Path, index_dir: Path) -> None:
    index, reader = load_index(index_dir), load_reader()
    rows = []
    for line in (work / "questions.jsonl").open(encoding="utf-8"):
        q = json.loads(line)
        hits = index.retrieve(q["question"], k=5)
        reading = reader.read(q["question"], hits, top=12)
        best = reading.best
        if best is None:
            continue
        answerable = q["format"] != "none"
        right = answerable and match(best.text, [q["answer"]]) > 0
        rows.append((answerable, right, reader.confidence(reading, best, hits)))
    answerable = [r for r in rows if r[0]]
    pos = [c for _, right, c in answerable if right]
    neg = [c for _, right, c in answerable if not right]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    print(
        f"{len(pos)} of {len(answerable)} answerable right; confidence AUROC "
        f"{wins / max(1, len(pos) * len(neg)):.3f}"
    )
    unanswerable = [c for has, _, c in rows if not has]
    for t in (0.05, 0.1, 0.2, 0.3, reader.calibration.span, 0.5):
        given = [r for r in answerable if r[2] >= t]
        precision = sum(r[1] for r in given) / max(1, len(given))
        declined = sum(c < t for c in unanswerable) / max(1, len(unanswerable))
        print(
            f"threshold {t:.3f}: answerable declined {1 - len(given) / len(answerable):.2f}, "
            f"precision {precision:.2f}; unanswerable declined {declined:.2f}"
        )


def calibrate(groups: Path, weights: Path) -> None:
    from ragteam.reader.training.calibrate import calibrate as fit
    from ragteam.reader.training.groups import groups_made_with, load_groups

    held = load_groups(groups, groups_made_with(groups)).held
    print(json.dumps(fit(weights, held), indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    d = sub.add_parser("demo")
    d.add_argument("--weights", type=Path, nargs="+", required=True)
    s = sub.add_parser("soup")
    s.add_argument("first", type=Path)
    s.add_argument("second", type=Path)
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--share", type=float, default=0.5, help="the second's share (0 to 1)")
    t = sub.add_parser("last")
    t.add_argument("checkpoint", type=Path)
    t.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("confidence")
    c.add_argument("--work", type=Path, required=True)
    c.add_argument("--index", type=Path, required=True)
    f = sub.add_parser("calibrate")
    f.add_argument("--groups", type=Path, required=True)
    f.add_argument("--weights", type=Path, required=True)
    args = parser.parse_args()
    if args.verb == "demo":
        demo(args.weights)
    elif args.verb == "soup":
        soup(args.first, args.second, args.out, args.share)
    elif args.verb == "last":
        last(args.checkpoint, args.out)
    elif args.verb == "calibrate":
        calibrate(args.groups, args.weights)
    else:
        confidence(args.work, args.index)


if __name__ == "__main__":
    main()
