"""Training questions for SMART trajectory learning: HotpotQA (gold supporting sentences),
MuSiQue (gold sub-questions) or plain `{id, question, answers}` rows.

Every row is checked; a problem is an `InputError` naming file and line. Test questions must
never reach training: `check_disjoint` refuses any overlap by id or by normalised text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragteam.common.jsonl import read_objects
from ragteam.common.metrics import normalize_answer
from ragteam.errors import InputError
from ragteam.formats import Posed

YES_NO = ("yes", "no")


class UnsupportedAnswer(InputError):
    """No gold answer occurs in the row's supporting paragraphs."""


@dataclass(frozen=True)
class TrainQuestion:
    """One training question and what the data says about its evidence.

    `facts` maps a supporting paragraph's title to its gold supporting sentences (HotpotQA), or to
    an empty tuple when only the paragraph is known to support (MuSiQue). `sub_questions` are gold
    search intents (MuSiQue), with `#n` references replaced by the answer of step n."""

    id: str
    question: str
    answers: tuple[str, ...]
    kind: str  # hotpotqa | musique | plain | noevidence (a label with no evidence)
    facts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    paragraphs: dict[str, str] = field(default_factory=dict)  # title -> text of its context
    sub_questions: tuple[str, ...] = ()
    where: str = ""  # file:line, for messages
    sub_answers: tuple[str, ...] = ()  # answers of the gold sub-questions (MuSiQue)
    choices: dict[str, str] = field(default_factory=dict)  # multiple choice: label -> option
    claim: bool = False  # a true/false claim (answers: ["true"] or ["false"])

    @property
    def asked(self) -> Posed:
        """The question as a strategy gets it at inference (`ragteam.answer(..., choices=...,
        claim=...)`)."""
        return Posed(self.question, self.choices, self.claim)

    @property
    def posed(self) -> str:
        """The text the agent is asked: the question with its options or true/false framing."""
        return self.asked.text

    @property
    def evidence_answers(self) -> tuple[str, ...]:
        """Strings whose presence marks a passage as evidence: the gold option's text for a
        multiple-choice row (its label is one letter), nothing for a claim, else the answers."""
        if self.choices:
            return (self.choices[self.answers[0]],)
        return () if self.claim else self.answers


def read_train_questions(
    path: str | Path, skip_unsupported: bool = False, skipped: list[str] | None = None
) -> list[TrainQuestion]:
    """All questions of a training JSONL; the format is detected per row. With
    `skip_unsupported`, rows whose answer occurs in no supporting paragraph are left out (their
    file:line appended to `skipped`) instead of being an error."""
    path = Path(path)
    rows: list[TrainQuestion] = []
    seen: set[str] = set()
    for number, row in read_objects(path):
        where = f"{path}:{number}"
        question = _text(row, "question", where)
        qid = str(row.get("id", number))
        if qid in seen:
            raise InputError(f"{where}: id '{qid}' occurs twice")
        seen.add(qid)
        choices, claim = _format(row, where)
        answers = (str(row["label"]).strip(),) if choices or claim else _answers(row, where)
        base = TrainQuestion(
            qid, question, answers, "plain", where=where, choices=choices, claim=claim
        )
        try:
            rows.append(_parse_row(base, row))
        except UnsupportedAnswer:
            if not skip_unsupported:
                raise
            if skipped is not None:
                skipped.append(where)
    if not rows:
        raise InputError(f"{path} holds no training questions")
    return rows


def _format(row: dict[str, Any], where: str) -> tuple[dict[str, str], bool]:
    """(choices, claim) of a row: `choices` (a mapping, or a list labelled A, B, ...) with a
    `label` among them is multiple choice; a `label` of true/false without choices is a claim."""
    raw, label = row.get("choices"), row.get("label")
    if raw is None:
        if label is None:
            return {}, False
        if str(label).strip().lower() not in ("true", "false"):
            raise InputError(
                f"{where}: a row with a 'label' and no 'choices' is a claim: its label must be "
                f"true or false, not {label!r}"
            )
        row["label"] = str(label).strip().lower()
        return {}, True
    if isinstance(raw, list):
        raw = {chr(ord("A") + i): option for i, option in enumerate(raw)}
    if not isinstance(raw, dict) or not raw or len(raw) > 26:
        raise InputError(f"{where}: 'choices' must be a mapping label -> text (or a list)")
    choices = {str(k).strip(): str(v).strip() for k, v in raw.items()}
    if not isinstance(label, str) or label.strip() not in choices:
        raise InputError(
            f"{where}: multiple choice 'label' {label!r} is not one of {sorted(choices)}"
        )
    return choices, False


def _parse_row(base: TrainQuestion, row: dict[str, Any]) -> TrainQuestion:
    """`base` (a plain question) with what `row` says about its evidence. Labelled rows
    (multiple choice, claims) answer with a label, which need not occur in the evidence. A
    labelled row without evidence cannot label the fact locator (nothing says which passage
    supports a label): it is kind `noevidence`, which trains the generator only (answering the
    posed question in its format after whatever was located)."""
    labelled = bool(base.choices or base.claim)
    if "supporting_facts" in row:
        return _hotpotqa(base, row, check=not labelled)
    if "decomposition" in row:
        return _musique(base, row)
    return replace(base, kind="noevidence") if labelled else base


def _text(row: dict[str, Any], key: str, where: str) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where}: '{key}' must be a non-empty string")
    return value.strip()


def _answers(row: dict[str, Any], where: str) -> tuple[str, ...]:
    value = row.get("answers")
    if not isinstance(value, list) or not value or not all(isinstance(a, str) for a in value):
        raise InputError(f"{where}: 'answers' must be a non-empty list of strings")
    answers = tuple(a.strip() for a in value if a.strip())
    if not answers:
        raise InputError(f"{where}: every answer is blank")
    return answers


def _context(row: dict[str, Any], where: str) -> list[dict[str, Any]]:
    context = row.get("context")
    if not isinstance(context, list) or not all(isinstance(c, dict) for c in context):
        raise InputError(f"{where}: 'context' must be a list of paragraph objects")
    return context


def _hotpotqa(base: TrainQuestion, row: dict[str, Any], check: bool = True) -> TrainQuestion:
    where = base.where
    sentences: dict[str, list[str]] = {}
    for paragraph in _context(row, where):
        title, body = paragraph.get("title"), paragraph.get("sentences")
        if not isinstance(title, str) or not isinstance(body, list):
            raise InputError(f"{where}: a context paragraph needs 'title' and 'sentences'")
        sentences[title] = [str(s) for s in body]
    facts: dict[str, list[str]] = {}
    for item in row["supporting_facts"]:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], int)):
            raise InputError(f"{where}: a supporting fact must be [title, sentence_index]")
        title, number = item
        if title not in sentences or not 0 <= number < len(sentences[title]):
            raise InputError(f"{where}: supporting fact {item} names no context sentence")
        facts.setdefault(title, []).append(sentences[title][number].strip())
    if not facts:
        raise InputError(f"{where}: 'supporting_facts' is empty")
    paragraphs = {t: "".join(s) for t, s in sentences.items()}
    if check:
        _check_answer_occurs(base.answers, [paragraphs[t] for t in facts], where)
    facts_of = {t: tuple(f) for t, f in facts.items()}
    return replace(base, kind="hotpotqa", facts=facts_of, paragraphs=paragraphs)


def _musique(base: TrainQuestion, row: dict[str, Any]) -> TrainQuestion:
    where = base.where
    paragraphs: dict[str, str] = {}
    supporting: list[str] = []
    for paragraph in _context(row, where):
        title, text = paragraph.get("title"), paragraph.get("text")
        if not isinstance(title, str) or not isinstance(text, str):
            raise InputError(f"{where}: a context paragraph needs 'title' and 'text'")
        paragraphs[title] = text
        if paragraph.get("is_supporting"):
            supporting.append(title)
    if not supporting:
        raise InputError(f"{where}: no context paragraph is marked 'is_supporting'")
    steps = row["decomposition"]
    if not isinstance(steps, list) or not all(isinstance(s, dict) for s in steps):
        raise InputError(f"{where}: 'decomposition' must be a list of {{question, answer}}")
    resolved: list[str] = []
    step_answers: list[str] = []
    for step in steps:
        text, answer = str(step.get("question", "")), str(step.get("answer", ""))
        text = re.sub(
            r"#(\d+)",
            lambda m: (
                step_answers[int(m.group(1)) - 1]
                if 0 < int(m.group(1)) <= len(step_answers)
                else m.group(0)
            ),
            text,
        )
        step_answers.append(answer)
        resolved.append(" ".join(text.split()))
    _check_answer_occurs(base.answers, [paragraphs[t] for t in supporting], where)
    return replace(
        base,
        kind="musique",
        facts={t: () for t in supporting},
        paragraphs=paragraphs,
        sub_questions=tuple(r for r in resolved if r),
        sub_answers=tuple(a for a in step_answers if a),
    )


def _check_answer_occurs(answers: tuple[str, ...], texts: list[str], where: str) -> None:
    """A span answer must occur in its supporting paragraphs, or the generator target would be
    unsupported by anything the locator can find (yes/no answers excepted)."""
    joined = normalize_answer(" ".join(texts))
    for answer in answers:
        norm = normalize_answer(answer)
        if norm in YES_NO or (norm and norm in joined):
            return
    raise UnsupportedAnswer(
        f"{where}: no answer of {list(answers)} occurs in the supporting paragraphs; "
        "fix the row or drop it (`--skip-unsupported` skips such rows)"
    )


def question_keys(path: str | Path) -> tuple[set[str], set[str]]:
    """Ids and normalised question texts of any JSONL with `question` fields (test sets)."""
    ids: set[str] = set()
    texts: set[str] = set()
    for _number, row in read_objects(Path(path)):
        if "id" in row:
            ids.add(str(row["id"]))
        if isinstance(row.get("question"), str):
            texts.add(normalize_answer(row["question"]))
    return ids, texts


def check_disjoint(questions: list[TrainQuestion], exclude: list[Path]) -> int:
    """Refuse training questions that appear (by id or normalised text) in any `exclude` file.
    Returns how many excluded questions were compared against."""
    compared = 0
    for path in exclude:
        ids, texts = question_keys(path)
        compared += max(len(ids), len(texts))
        clash = [q for q in questions if q.id in ids or normalize_answer(q.question) in texts]
        if clash:
            first = clash[0]
            raise InputError(
                f"{first.where}: training question '{first.id}' also appears in {path} "
                f"({len(clash)} overlapping); never train on test questions: remove them"
            )
    return compared
