"""The reading rules of §47 checked on TRAINING data (never on docqa-dev):

    python bench/reading_checks.py bounds --groups G.jsonl.gz [--weights W]
    python bench/reading_checks.py polar --data ../shared/data/train [--weights W]
    python bench/reading_checks.py key-lines --groups G.jsonl.gz --tables WTQ_DIR [--weights W]
    python bench/reading_checks.py echoes --groups G.jsonl.gz --tables WTQ_DIR [--weights W]

`bounds`: EM/F1 of the reader's best span on the held span groups of a groups file
(`ragteam train reader --groups G`), with whole-token bounds and without, per source.
`polar`: how `is_polar` tells HotpotQA and MuSiQue training questions (answer yes/no or not),
how many StrategyQA questions it takes for yes/no, and how often the reader's yes/no outcome
is right on 200 StrategyQA questions over their facts and on HotpotQA's yes/no questions
over their gold paragraphs.
`key-lines`: the reader with and without its key-line reading (`read --opt key_lines=true`,
`ragteam.reader.view.key_line`), on the held groups of a groups file and on WikiTableQuestions
training questions over their tables as the default converters give them (a header row, then a
row a line, `cell | cell`; the gold rows' passage beside two others of the table): EM and F1 of
the best span, and the label as `read` decides it (the confidence at or above the calibrated
span threshold, the no-answer probability below the abstention threshold): how many span
groups are labelled and how often those are right (F1 >= 0.5), and how many groups with no
answer are. `echoes`: the same, key lines on, without and with `skip_echoes` (no span of the
question's own words alone: `ragteam.reader.bounds.echoes`)."""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
from pathlib import Path

import ragteam.reader.read as reading
from ragteam.common.metrics import exact_match, f1_score
from ragteam.reader.polar import is_polar, polar_answer
from ragteam.reader.training.groups import groups_made_with, load_groups
from ragteam.reader.training.tables import COMPUTED
from ragteam.types import Passage


def _scores(reader, held) -> tuple[float, float, dict]:  # noqa: ANN001
    em = f1 = 0.0
    by: dict[str, list[float]] = {}
    for g in held:
        passages = [Passage(f"p{i}", "", t) for i, t in enumerate(g.texts)]
        best = reader.read(g.question, passages, top=1).best
        said = best.text if best else ""
        e, f = exact_match(said, g.answers), f1_score(said, g.answers)
        em, f1 = em + e, f1 + f
        row = by.setdefault(g.source, [0, 0.0, 0.0])
        row[0], row[1], row[2] = row[0] + 1, row[1] + e, row[2] + f
    per = {k: (int(n), round(e / n, 3), round(f / n, 3)) for k, (n, e, f) in by.items()}
    return em / len(held), f1 / len(held), per


def bounds(groups: Path, weights: Path | None) -> None:
    held = [g for g in load_groups(groups, groups_made_with(groups)).held if g.label == "span"]
    reader = reading.load_reader(weights)
    widened = _scores(reader, held)
    kept, reading.whole = reading.whole, lambda text, a, b: (a, b)
    try:
        raw = _scores(reader, held)
    finally:
        reading.whole = kept
    print(f"{len(held)} held span groups")
    print(f"whole tokens: EM {widened[0]:.3f} F1 {widened[1]:.3f}", widened[2])
    print(f"as read:      EM {raw[0]:.3f} F1 {raw[1]:.3f}", raw[2])


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8")]


def polar(data: Path, weights: Path | None) -> None:
    told = {"tp": 0, "fp": 0, "fn": 0}
    for name in ("hotpotqa_train.jsonl", "musique_train.jsonl"):
        for row in _rows(data / name):
            yn, said = row["answers"][0].lower() in ("yes", "no"), is_polar(row["question"])
            if yn or said:
                told["tp" if yn and said else "fp" if said else "fn"] += 1
    strategy = _rows(data / "formats" / "strategyqa_train.jsonl")
    print(
        f"is_polar on HotpotQA+MuSiQue train: {told}; StrategyQA taken as yes/no "
        f"{sum(is_polar(r['question']) for r in strategy)} of {len(strategy)}"
    )
    reader = reading.load_reader(weights)
    random.Random(5).shuffle(strategy)
    right = 0
    for row in strategy[:200]:
        ps = [
            Passage(f"p{i}", c["title"], " ".join(c["sentences"]))
            for i, c in enumerate(row["context"])
        ]
        said = polar_answer(reader.read(row["question"], ps, top=12))
        right += said is not None and said.kind == row["answers"][0].lower()
    gold_yes = sum(r["answers"][0].lower() == "yes" for r in strategy[:200])
    print(f"yes/no outcome on 200 StrategyQA: {right} right (answering yes always: {gold_yes})")
    right = n = 0
    for row in _rows(data / "hotpotqa_train.jsonl"):
        if row["answers"][0].lower() not in ("yes", "no"):
            continue
        gold = {t for t, _ in row["supporting_facts"]}
        ps = [
            Passage(f"p{i}", c["title"], "".join(c["sentences"]))
            for i, c in enumerate(row["context"])
            if c["title"] in gold
        ]
        said = polar_answer(reader.read(row["question"], ps, top=12))
        n, right = n + 1, right + (said is not None and said.kind == row["answers"][0].lower())
    print(f"yes/no outcome on HotpotQA's yes/no training questions: {right} of {n}")


def wtq_cells(folder: Path, count: int, seed: int = 7) -> list[tuple[str, str, list[str]]]:
    """(question, answer, passages) of WikiTableQuestions training questions answered by one
    cell of one passage: the table cut into passages of 8 rows, each after the header row, as
    `cell | cell` lines; the gold passage shuffled among two others of the table."""
    rng = random.Random(seed)
    with (folder / "data" / "training.tsv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    rng.shuffle(rows)
    out: list[tuple[str, str, list[str]]] = []
    for row in rows:
        said, asked = row["targetValue"].strip(), row["utterance"].strip()
        if "|" in said or not said or COMPUTED.match(asked):
            continue
        try:
            with (folder / row["context"]).open(encoding="utf-8", newline="") as f:
                table = list(csv.reader(f, escapechar="\\"))
        except (OSError, csv.Error, UnicodeDecodeError):
            continue
        if len(table) >= 4 and (shown := _shown(table, said, rng)):
            out.append((asked, said, shown))
        if len(out) >= count:
            break
    return out


def _line(cells: list[str]) -> str:
    return " | ".join(" ".join(c.replace("|", "/").split()) for c in cells)


def _shown(table: list[list[str]], said: str, rng: random.Random) -> list[str]:
    """The passage of `table` whose rows hold `said` as a whole cell among two others (none
    when no passage or more than one does)."""
    parts = [
        "\n".join([_line(table[0]), *map(_line, table[n : n + 8])]) for n in range(1, len(table), 8)
    ]
    cell = re.compile(r"(?:^| \| )" + re.escape(said) + r"(?= \||$)", re.M)
    gold = [p for p in parts if cell.search(p.split("\n", 1)[1])]
    if len(gold) != 1:
        return []
    others = [p for p in parts if p not in gold]
    shown = gold + rng.sample(others, min(2, len(others)))
    rng.shuffle(shown)
    return shown


def _read_label(reader, question: str, texts: list[str], ways: dict) -> tuple[str, bool]:  # noqa: ANN001
    """The best span's words, and whether `read` would label it supported (`ways`: the
    reader's options, e.g. key_lines)."""
    passages = [Passage(f"p{i}", "", t) for i, t in enumerate(texts)]
    found = reader.read(question, passages, top=20, **ways)
    if found.best is None:
        return "", False
    sure = reader.confidence(found, found.best, passages) >= reader.calibration.span
    return found.best.text, sure and found.no_answer < reader.calibration.abstain


def key_lines(
    groups: Path | None, tables: Path | None, n: int, weights: Path | None, way: str
) -> None:
    """The reader with its option `way` off and on (`key_lines`; or `skip_echoes`, then with
    key lines on in both)."""
    base = {} if way == "key_lines" else {"key_lines": True}
    sets: dict[str, list[tuple[str, list[str], list[str]]]] = {}
    if groups is not None:
        for g in load_groups(groups, groups_made_with(groups)).held:
            if g.label in ("span", "none"):
                sets.setdefault(f"{g.source}/{g.label}", []).append(
                    (g.question, list(g.answers), list(g.texts))
                )
    if tables is not None:
        sets["wtq-cells/span"] = [(q, [a], ps) for q, a, ps in wtq_cells(tables, n)]
    print(f"| groups | n | {way} | EM | F1 | labelled | labelled right |")
    print("|---|---|---|---|---|---|---|")
    for name, rows in sets.items():
        for key in (False, True):
            em = f1 = labelled = right = 0.0
            ways = {**base, way: key}
            for question, answers, texts in rows:
                said, sure = _read_label(reading.load_reader(weights), question, texts, ways)
                e, f = exact_match(said, answers), f1_score(said, answers)
                em, f1 = em + e, f1 + f
                labelled, right = labelled + sure, right + (sure and f >= 0.5)
            share = f"{right / labelled:.2f}" if labelled and name.endswith("span") else "-"
            print(
                f"| {name} | {len(rows)} | {'on' if key else 'off'} | {em / len(rows):.3f} | "
                f"{f1 / len(rows):.3f} | {int(labelled)} | {share} |",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("bounds")
    b.add_argument("--groups", type=Path, required=True)
    b.add_argument("--weights", type=Path)
    p = sub.add_parser("polar")
    p.add_argument("--data", type=Path, required=True, help="the training folder")
    p.add_argument("--weights", type=Path)
    for command in ("key-lines", "echoes"):
        k = sub.add_parser(command)
        k.add_argument("--groups", type=Path, help="a groups file: its held groups")
        k.add_argument("--tables", type=Path, help="a WikiTableQuestions folder")
        k.add_argument("--n", type=int, default=300, help="WikiTableQuestions questions")
        k.add_argument("--weights", type=Path)
    args = parser.parse_args()
    if args.command == "bounds":
        bounds(args.groups, args.weights)
    elif args.command in ("key-lines", "echoes"):
        way = "key_lines" if args.command == "key-lines" else "skip_echoes"
        key_lines(args.groups, args.tables, args.n, args.weights, way)
    else:
        polar(args.data, args.weights)


if __name__ == "__main__":
    main()
