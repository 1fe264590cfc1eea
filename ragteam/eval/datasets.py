"""Evaluation data: ragteam's normalized JSONL and the AQA authors' per-agent logs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragteam.common.jsonl import read_objects
from ragteam.errors import InputError

AQA_AGENTS = ("nor", "oner", "ircot")


@dataclass(frozen=True)
class Example:
    """One question: `{id, question, answers, supporting_ids?, evidence?, choices?, label?,
    type?}`. `evidence` says how `supporting_ids` are meant: `all` (the default, HotpotQA: every
    one is needed) or `any` (PopQA: each holds the answer, one suffices)."""

    id: str
    question: str
    answers: tuple[str, ...]
    supporting_ids: tuple[str, ...] = ()
    choices: dict[str, str] | None = None
    label: str | None = None
    type: str | None = None
    evidence: str = "all"


@dataclass(frozen=True)
class AgentLog:
    prediction: str
    seconds: float
    steps: int
    em: float
    f1: float
    accuracy: float


@dataclass(frozen=True)
class AqaRecord:
    """One question of the AQA logs with each agent's logged prediction and scores."""

    id: str
    question: str
    answers: tuple[str, ...]
    complexity: str
    agents: dict[str, AgentLog] = field(default_factory=dict)

    def example(self) -> Example:
        return Example(self.id, self.question, self.answers, type=self.complexity)


def _strings(path: Path, number: int, row: dict[str, Any], key: str, required: bool) -> tuple:
    value = row.get(key)
    if value is None and not required:
        return ()
    if isinstance(value, str):
        value = [value]
    if (
        not isinstance(value, list)
        or not all(isinstance(v, str) for v in value)
        or (required and not value)
    ):
        raise InputError(f"{path}:{number}: '{key}' must be a non-empty list of strings")
    return tuple(value)


def read_examples(path: str | Path) -> list[Example]:
    """Read normalized JSONL; a malformed line is an error naming file and line."""
    path = Path(path)
    examples: list[Example] = []
    seen: set[str] = set()
    for number, row in read_objects(path):
        question = row.get("question")
        if not isinstance(question, str) or not question.strip():
            raise InputError(f"{path}:{number}: 'question' must be a non-empty string")
        qid = str(row.get("id", number))
        if qid in seen:
            raise InputError(f"{path}:{number}: id '{qid}' occurs twice")
        seen.add(qid)
        choices = _choices(path, number, row)
        label = row.get("label")
        if choices is not None and str(label) not in choices:
            raise InputError(
                f"{path}:{number}: 'label' {label!r} is not one of the choices {sorted(choices)}"
            )
        evidence = row.get("evidence", "all")
        if evidence not in ("all", "any"):
            raise InputError(f'{path}:{number}: \'evidence\' must be "all" or "any"')
        answers = _strings(path, number, row, "answers", required=label is None)
        examples.append(
            Example(
                qid,
                question,
                answers or (str(label),),
                _strings(path, number, row, "supporting_ids", required=False),
                choices,
                None if label is None else str(label),
                None if row.get("type") is None else str(row["type"]),
                evidence,
            )
        )
    return examples


def _choices(path: Path, number: int, row: dict[str, Any]) -> dict[str, str] | None:
    """`choices` as a mapping label -> text; a list is labelled A, B, C, ..."""
    choices = row.get("choices")
    if choices is None:
        return None
    if isinstance(choices, list) and 0 < len(choices) <= 26:
        choices = {chr(ord("A") + i): c for i, c in enumerate(choices)}
    if not isinstance(choices, dict) or not choices:
        raise InputError(f"{path}:{number}: 'choices' must be an object of label -> text or a list")
    return {str(k): str(v) for k, v in choices.items()}


def read_aqa_log(path: str | Path) -> list[AqaRecord]:
    """Read an AQA `*_complete.jsonl` log (question, gold answers, complexity label, and each
    agent's predicted answer, seconds, steps and {em, f1, accuracy})."""
    path = Path(path)
    records = []
    for number, row in read_objects(path):
        try:
            agents = {
                name: AgentLog(
                    str(row[f"{name}_predicted_answer"]),
                    float(row[f"{name}_time_taken"]),
                    int(row[f"{name}_steps_taken"]),
                    float(row[f"{name}_evaluation_results"]["em"]),
                    float(row[f"{name}_evaluation_results"]["f1"]),
                    float(row[f"{name}_evaluation_results"]["accuracy"]),
                )
                for name in AQA_AGENTS
            }
            records.append(
                AqaRecord(
                    str(row["question_id"]),
                    str(row["question_text"]),
                    tuple(str(a) for a in row["gold_answers"]),
                    str(row["complexity_label"]),
                    agents,
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            problem = f"{path}:{number}: not an AQA log record ({exc!r} missing or bad)"
            raise InputError(problem) from exc
    return records


def load_dataset(path: str | Path) -> list[Example]:
    """Examples from our normalized JSONL, or from an AQA log (recognized by its keys; the
    complexity label becomes the question `type`)."""
    path = Path(path)
    first = next(read_objects(path), (0, {}))[1]
    if "question_text" in first and "gold_answers" in first:
        return [record.example() for record in read_aqa_log(path)]
    return read_examples(path)
