"""The span reader alone: EM/F1 on the held training groups (never a benchmark question), and
its speed on the 2 cores.

    python bench/reader.py held --data ../shared/data/train [--weights FILE] [--documents DIR]
    python bench/reader.py unseen --groups G.jsonl.gz --weights NEW [--weights NEW2] \\
        --baseline OLD [--runs-without SOURCE]
    python bench/reader.py speed --index IDX --questions bench/data/hotpotqa/dev300.jsonl \\
        [--n 50] [--weights FILE]

`held` rebuilds the groups exactly as `ragteam train reader` split them (by question id) and
reports, per source and label, exact match and F1 of the best reading (a group with no answer
counts as right when the best reading's no-answer probability reaches the calibrated
`abstain`), and how often the abstention threshold refuses the answerable and declines the
unanswerable. `unseen` compares two readers on the held groups of a groups file that no
validation of a run looked at (those after the first `held_checked`, 300: a run keeps the
checkpoint that scores best on those first ones), paired by group, scored as a validation
scores them. `speed` times retrieval and the reader at k = 5 and k = 10 (median and 90th
percentile ms per question), after one warm-up question."""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from ragteam.common.metrics import exact_match, f1_score
from ragteam.reader import default_weights, load_reader
from ragteam.types import Passage


def held(data: Path, weights: Path, documents: Path | None = None) -> None:
    from ragteam.reader.training.groups import Wanted, build
    from ragteam.reader.training.settings import ReaderSettings

    settings = ReaderSettings()
    wanted = Wanted(
        settings.clozes, documents, settings.doc_tables, settings.doc_clozes, settings.doc_pdfs
    )
    built = build(data, wanted, settings.held_share, settings.seed)
    reader = load_reader(weights)
    rows: dict[str, list[tuple[float, float, bool]]] = {}
    for g in built.held:
        passages = [Passage(f"p{i}", "", t) for i, t in enumerate(g.texts)]
        reading = reader.read(g.question, passages, top=8)
        declined = reading.no_answer >= reader.calibration.abstain
        said = "" if reading.best is None else reading.best.text
        if g.label == "none":
            em = f1 = float(declined)
        else:
            em, f1 = exact_match(said, list(g.answers)), f1_score(said, list(g.answers))
        rows.setdefault(f"{g.source}/{g.label}", []).append((em, f1, declined))
    answerable = [r for k, v in rows.items() if not k.endswith("/none") for r in v]
    print(f"held groups: {sum(len(v) for v in rows.values())} ({weights.name})")
    for key, values in sorted(rows.items()):
        em = statistics.mean(v[0] for v in values)
        f1 = statistics.mean(v[1] for v in values)
        print(f"  {key:32} n={len(values):4}  EM {em:.3f}  F1 {f1:.3f}")
    print(
        f"  answerable: EM {statistics.mean(r[0] for r in answerable):.3f} "
        f"F1 {statistics.mean(r[1] for r in answerable):.3f}; refused by the abstention "
        f"threshold {statistics.mean(r[2] for r in answerable):.3f}"
    )


def unseen(groups: Path, weights: list[Path], baseline: Path, runs_without: list[str] = ()) -> None:
    """Each of `weights` against `baseline` on the held groups no validation looked at: those
    after the first `held_checked` of the file and, for each source in `runs_without`, after
    the first `held_checked` of the file less that source (what a run trained `--without` it
    validated on). Paired by group, overall and per source."""
    import random

    from ragteam.reader.training.groups import groups_made_with, load_groups
    from ragteam.reader.training.settings import ReaderSettings

    every = load_groups(groups, groups_made_with(groups)).held
    first = ReaderSettings().held_checked
    looked = {id(g) for g in every[:first]}
    for source in runs_without:
        looked |= {id(g) for g in [g for g in every if g.source != source][:first]}
    held = [g for g in every if id(g) not in looked]
    base = _scored(baseline, held)
    print(f"{len(held)} held groups no validation looked at; baseline {baseline.name}")
    for path in weights:
        rows = _scored(path, held)
        print(f"{path}:")
        _paired("all", rows, base, random.Random(1))
        for source in sorted({g.source for g in held}):
            at = [i for i, g in enumerate(held) if g.source == source]
            _paired(source, [rows[i] for i in at], [base[i] for i in at], random.Random(1))


def _scored(weights: Path, held: list) -> list[tuple[float, float]]:  # noqa: ANN001
    """(EM, F1) of the best reading per group, as a validation scores it."""
    reader = load_reader(weights)
    rows = []
    for g in held:
        passages = [Passage(f"p{i}", "", t) for i, t in enumerate(g.texts)]
        reading = reader.read(g.question, passages, top=8)
        said = "" if reading.no_answer > 0.5 or reading.best is None else reading.best.text
        if g.label == "none":
            rows.append((float(not said), float(not said)))
        else:
            rows.append((exact_match(said, list(g.answers)), f1_score(said, list(g.answers))))
    return rows


def _paired(name: str, new: list, old: list, rng) -> None:  # noqa: ANN001
    parts = []
    for i, measure in enumerate(("EM", "F1")):
        diffs = [n[i] - b[i] for n, b in zip(new, old, strict=True)]
        means = sorted(sum(rng.choice(diffs) for _ in diffs) / len(diffs) for _ in range(2000))
        parts.append(
            f"{measure} {statistics.mean(b[i] for b in old):.3f} -> "
            f"{statistics.mean(n[i] for n in new):.3f} ({statistics.mean(diffs):+.3f}, "
            f"{means[50]:+.3f} to {means[1949]:+.3f})"
        )
    print(f"  {name} ({len(new)}): " + "; ".join(parts))


def speed(index_dir: Path, questions: Path, n: int, weights: Path) -> None:
    from ragteam.retrieval import load_index

    index = load_index(index_dir)
    reader = load_reader(weights)
    rows = [json.loads(x) for x in questions.read_text().splitlines() if x.strip()][:n]
    for k in (5, 10):
        found = [index.retrieve(r["question"], k) for r in rows]
        reader.read(rows[0]["question"], found[0])  # warm-up
        times = []
        for r, passages in zip(rows, found, strict=True):
            started = time.perf_counter()
            reader.read(r["question"], passages)
            times.append(1000 * (time.perf_counter() - started))
        times.sort()
        print(
            f"k={k}: reader {statistics.median(times):.0f} ms median, "
            f"{times[int(0.9 * len(times))]:.0f} ms p90 over {len(times)} questions"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("held")
    a.add_argument("--data", type=Path, required=True)
    a.add_argument("--weights", type=Path, default=default_weights())
    a.add_argument("--documents", type=Path, help="the documents `train reader` was given")
    u = sub.add_parser("unseen")
    u.add_argument("--groups", type=Path, required=True)
    u.add_argument("--weights", type=Path, action="append", required=True)
    u.add_argument("--baseline", type=Path, default=default_weights())
    u.add_argument("--runs-without", action="append", default=[], help="see unseen()")
    b = sub.add_parser("speed")
    b.add_argument("--index", type=Path, required=True)
    b.add_argument("--questions", type=Path, required=True)
    b.add_argument("--n", type=int, default=50)
    b.add_argument("--weights", type=Path, default=default_weights())
    args = parser.parse_args()
    if args.command == "held":
        held(args.data, args.weights, args.documents)
    elif args.command == "unseen":
        unseen(args.groups, args.weights, args.baseline, args.runs_without)
    else:
        speed(args.index, args.questions, args.n, args.weights)


if __name__ == "__main__":
    main()
