"""Reports over run directories: bootstrap CIs, breakdowns, paired comparisons, a plot."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragteam.errors import InputError
from ragteam.eval.row import EvalRow
from ragteam.eval.rundir import RunDir

Table = dict[str, dict[str, EvalRow]]  # label -> question id -> row

QUALITY = ("choice_accuracy", "em", "f1", "match", "retrieval_all", "shown_all")
BOOTSTRAP = 2000


@dataclass
class Summary:
    label: str
    n: int
    means: dict[str, tuple[float, float, float]]  # metric -> (mean, ci low, ci high)
    per_question: dict[str, float]  # calls, tokens, seconds, parse failures per question
    errors: int
    counts: dict[str, int] = field(default_factory=dict)  # metric -> rows that have it


def bootstrap_ci(values: list[float], seed: int = 0) -> tuple[float, float]:
    """95% percentile bootstrap interval of the mean."""
    if not values:
        return (0.0, 0.0)
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(BOOTSTRAP, len(data)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def load_runs(paths: list[Path]) -> Table:
    """label -> question id -> row. Labels are strategy names, or run/strategy if names repeat."""
    loaded = [(Path(p), RunDir(p).rows()) for p in paths]
    for path, rows in loaded:
        RunDir(path).config()  # a folder that is not a run is an error
        if not rows:
            raise InputError(f"{path} holds no results yet; run `ragteam eval` first")
    names = [row.strategy for _, rows in loaded for row in rows]
    repeated = len(paths) > 1 and len({(p, r.strategy) for p, rows in loaded for r in rows}) > len(
        set(names)
    )
    table: Table = defaultdict(dict)
    for path, rows in loaded:
        for row in rows:
            label = f"{path.name}/{row.strategy}" if repeated else row.strategy
            table[label][row.id] = row
    return dict(table)


def common_questions(table: Table) -> Table:
    """The same table restricted to the questions every strategy answered."""
    shared = set.intersection(*(set(rows) for rows in table.values())) if table else set()
    if not shared:
        raise InputError("the runs share no question; drop --common or pick overlapping runs")
    return {label: {q: r for q, r in rows.items() if q in shared} for label, rows in table.items()}


def summarize(label: str, rows: list[EvalRow]) -> Summary:
    means, counts = {}, {}
    for metric in QUALITY:  # a metric only some rows have is averaged over those rows
        values = [r.metrics[metric] for r in rows if metric in r.metrics]
        if values:
            means[metric] = (float(np.mean(values)), *bootstrap_ci(values))
            counts[metric] = len(values)
    n = len(rows)
    per_question = {
        "calls": sum(r.cost.llm_calls for r in rows) / n,
        "tokens": sum(r.cost.tokens for r in rows) / n,
        "seconds": sum(r.wall_seconds for r in rows) / n,
        "parse_failures": sum(r.cost.parse_failures for r in rows) / n,
    }
    errors = sum(1 for r in rows if r.error)
    return Summary(label, n, means, per_question, errors, counts)


def paired(a: dict[str, EvalRow], b: dict[str, EvalRow], metric: str = "f1") -> dict[str, Any]:
    """Mean difference (a - b) over the questions both answered and both scored on `metric`
    (retrieval recall exists only where a question marks supporting passages), its CI, and
    win counts."""
    shared = sorted(q for q in set(a) & set(b) if metric in a[q].metrics and metric in b[q].metrics)
    diffs = [a[q].metrics[metric] - b[q].metrics[metric] for q in shared]
    low, high = bootstrap_ci(diffs)
    return {
        "n": len(shared),
        "mean_diff": float(np.mean(diffs)) if diffs else 0.0,
        "ci": (low, high),
        "wins_a": sum(d > 0 for d in diffs),
        "wins_b": sum(d < 0 for d in diffs),
        "ties": sum(d == 0 for d in diffs),
    }


def breakdown(table: Table, metric: str = "f1") -> dict[str, dict[str, Any]]:
    """label -> group (`type` of the question) -> (n, mean metric)."""
    out: dict[str, dict[str, Any]] = {}
    for label, rows in table.items():
        groups: dict[str, list[float]] = defaultdict(list)
        for row in rows.values():
            groups[str(row.type or "all")].append(row.metrics[metric])
        out[label] = {g: (len(v), float(np.mean(v))) for g, v in sorted(groups.items())}
    return out


def _cell(stat: tuple[float, float, float] | None, count: int | None = None, n: int = 0) -> str:
    """mean (CI), and the number of rows it is over when that is fewer than all."""
    if stat is None:
        return "-"
    partial = f" [{count} of {n}]" if count is not None and count < n else ""
    return f"{stat[0]:.3f} ({stat[1]:.3f}-{stat[2]:.3f}){partial}"


def resolve_baseline(table: Table, baseline: str) -> str:
    """The label `baseline` names: itself, or the one label that ends in `/baseline`."""
    if baseline in table:
        return baseline
    matches = [label for label in table if label.endswith("/" + baseline)]
    if len(matches) == 1:
        return matches[0]
    what = "names several runs" if matches else "is not among the runs' strategies"
    raise InputError(f"--baseline {baseline} {what}: use one of {', '.join(table)}")


METRIC_NAMES = {
    "choice_accuracy": "accuracy",
    "f1": "F1",
    "em": "EM",
    "match": "match",
    "retrieval_all": "retrieval recall",
    "shown_all": "gold shown",
}


def render_markdown(table: Table, baseline: str | None = None, metric: str | None = None) -> str:
    """The report. `metric` is the task's own metric, compared pairwise first (default:
    accuracy for multiple-choice/claim runs, else F1; PopQA's is `match`)."""
    if baseline is not None:
        baseline = resolve_baseline(table, baseline)
    summaries = [summarize(label, list(rows.values())) for label, rows in table.items()]
    graded = any("choice_accuracy" in s.means for s in summaries)  # the task's metric first
    shown = any("shown_all" in s.means for s in summaries)  # gold among the passages shown
    lines = [
        "| strategy | n | " + ("accuracy | " if graded else "") + "EM | F1 | match "
        "| retrieval recall (all gold) | "
        + ("gold shown (all) | " if shown else "")
        + "calls/q | tokens/q | s/q | parse fail/q | errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|"
        + ("---|" if graded else "")
        + ("---|" if shown else ""),
    ]
    for s in summaries:
        pq = s.per_question
        first = (
            f"{_cell(s.means.get('choice_accuracy'), s.counts.get('choice_accuracy'), s.n)} | "
            if graded
            else ""
        )
        lines.append(
            f"| {s.label} | {s.n} | {first}{_cell(s.means.get('em'))} | "
            f"{_cell(s.means.get('f1'))} | "
            f"{_cell(s.means.get('match'))} | "
            f"{_cell(s.means.get('retrieval_all'), s.counts.get('retrieval_all'), s.n)} | "
            + (
                f"{_cell(s.means.get('shown_all'), s.counts.get('shown_all'), s.n)} | "
                if shown
                else ""
            )
            + f"{pq['calls']:.2f} | {pq['tokens']:.0f} | {pq['seconds']:.2f} | "
            f"{pq['parse_failures']:.2f} | {s.errors} |"
        )
    lines.append("\nMeans with 95% bootstrap intervals in brackets.\n")
    groups = breakdown(table)
    names = sorted({g for per in groups.values() for g in per})
    if names != ["all"]:
        lines += [
            "| strategy | " + " | ".join(f"F1 {g} (n)" for g in names) + " |",
            "|---|" + "---|" * len(names),
        ]
        for label, per in groups.items():
            cells = [f"{per[g][1]:.3f} ({per[g][0]})" if g in per else "-" for g in names]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += _paired_lines(table, baseline, metric) + _role_lines(table)
    return "\n".join(lines)


def _paired_lines(table: Table, baseline: str | None, task_metric: str | None) -> list[str]:
    labels = list(table)
    if len(labels) < 2:
        return []
    base = baseline if baseline in table else ("oner" if "oner" in table else labels[0])
    lines = [
        f"Paired differences against `{base}` (same questions):\n",
        "| strategy | metric | n | mean diff (95% CI) | wins | losses | ties |",
        "|---|---|---|---|---|---|---|",
    ]
    graded = any("choice_accuracy" in r.metrics for rows in table.values() for r in rows.values())
    first = task_metric or ("choice_accuracy" if graded else "f1")
    order = dict.fromkeys((first, "f1", "retrieval_all", "shown_all"))
    for metric in order:
        name = METRIC_NAMES.get(metric, metric)
        for label in labels:
            if label == base:
                continue
            p = paired(table[label], table[base], metric)
            if not p["n"]:
                continue  # no question scored on this metric by both
            lines.append(
                f"| {label} | {name} | {p['n']} | {p['mean_diff']:+.3f} "
                f"({p['ci'][0]:+.3f} to {p['ci'][1]:+.3f}) | {p['wins_a']} | {p['wins_b']} "
                f"| {p['ties']} |"
            )
    return lines + [""]


def role_failures(rows: list[EvalRow]) -> dict[str, tuple[int, int]]:
    """role -> (model calls that failed to parse, model calls), summed over the rows' traces."""
    calls: dict[str, int] = defaultdict(int)
    failed: dict[str, int] = defaultdict(int)
    for row in rows:
        for step in (row.trace or {}).get("steps", []):
            if step.get("kind") == "llm":
                calls[step.get("role") or "?"] += 1
                failed[step.get("role") or "?"] += 1 if step.get("parse_failures") else 0
    return {role: (failed[role], calls[role]) for role in calls}


def _role_lines(table: Table) -> list[str]:
    per = {label: role_failures(list(rows.values())) for label, rows in table.items()}
    if not any(failed for roles in per.values() for failed, _ in roles.values()):
        return []
    lines = [
        "Model calls whose reply failed to parse, by role (failed / calls):\n",
        "| strategy | role | failed | calls | rate |",
        "|---|---|---|---|---|",
    ]
    for label, roles in per.items():
        for role, (failed, calls) in roles.items():
            lines.append(f"| {label} | {role} | {failed} | {calls} | {failed / calls:.2f} |")
    return lines


def plot(table: Table, path: Path) -> Path:
    """F1 against seconds per question, one point per strategy with its 95% CI bar."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4), dpi=120)
    for label, rows in table.items():
        s = summarize(label, list(rows.values()))
        mean, low, high = s.means["f1"]
        x = s.per_question["seconds"]
        ax.errorbar([x], [mean], yerr=[[mean - low], [high - mean]], fmt="o", capsize=4)
        ax.annotate(label, (x, mean), textcoords="offset points", xytext=(6, 4))
    ax.set_xlabel("seconds per question")
    ax.set_ylabel("F1 (mean, 95% CI)")
    ax.set_title("quality against cost")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
