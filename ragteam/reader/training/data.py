"""Training groups for the span reader, from test-disjoint training data only.

A `Group` is one question read against several passages, with where its answer stands:
- HotpotQA train (distractor setting): the gold paragraphs and some distractors, the answer's
  occurrences in the gold paragraphs (distant supervision, as TriviaQA was built; every
  occurrence counts), or yes/no on the gold paragraphs for comparison questions;
- MuSiQue train: the question over its supporting paragraphs and distractors, and each gold
  sub-question (its "#n" filled with the earlier answers) over the paragraphs holding its answer;
- the same questions over distractors alone: "no answer" (what abstention learns from);
- cloze questions made by rule from the training corpus's sentences (a name, number or date
  replaced by a question word, Lewis et al. 2019), read among other paragraphs of the corpus;
- SQuAD-format reading comprehension files named by path (`squad`): the annotated spans, read
  among other paragraphs of the same article.
Validation takes the questions whose id hashes into `held` (never a benchmark question)."""

from __future__ import annotations

import functools
import hashlib
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragteam.errors import InputError

DISTRACTORS = 4  # distractor paragraphs beside the gold ones in a positive group


@dataclass(frozen=True)
class Group:
    question: str
    texts: tuple[str, ...]
    label: str  # span | yes | no | none
    spans: tuple[tuple[tuple[int, int], ...], ...] = ()  # per text: the answer's char spans
    gold: tuple[int, ...] = ()  # texts a yes/no rests on
    answers: tuple[str, ...] = ()
    source: str = ""
    qid: str = ""


@dataclass
class Built:
    train: list[Group] = field(default_factory=list)
    held: list[Group] = field(default_factory=list)


def occurrences(text: str, answer: str) -> list[tuple[int, int]]:
    """Where `answer` stands in `text`, case-insensitively, on word boundaries."""
    answer = answer.strip()
    if not answer:
        return []
    pattern = re.compile(r"(?<!\w)" + re.escape(answer) + r"(?!\w)", re.IGNORECASE)
    return [m.span() for m in pattern.finditer(text)]


def held_out(qid: str, share: float) -> bool:
    return int(hashlib.sha256(qid.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < share


def fold_of(group: str, folds: int) -> int:
    """The cross-validation fold of `group` (a file's: a file's questions share a fold), by
    the same hash as `held_out`."""
    return int(hashlib.sha256(group.encode()).hexdigest()[:8], 16) % folds


def _positive(qid, question, gold, others, answers, rng, source) -> Iterator[Group]:  # noqa: ANN001
    """The question over gold + distractors, and over distractors alone (no answer)."""
    shown = list(gold) + rng.sample(others, min(DISTRACTORS, len(others)))
    rng.shuffle(shown)
    lowered = [a.lower() for a in answers]
    if lowered[0] in ("yes", "no"):
        marks = tuple(i for i, t in enumerate(shown) if t in gold)
        yield Group(
            question,
            tuple(shown),
            lowered[0],
            gold=marks,
            answers=tuple(answers),
            source=source,
            qid=qid,
        )
    else:
        spans = tuple(
            tuple(s for a in answers for s in occurrences(t, a)) if t in gold else () for t in shown
        )
        if any(spans):
            yield Group(
                question,
                tuple(shown),
                "span",
                spans,
                answers=tuple(answers),
                source=source,
                qid=qid,
            )
    empty = [t for t in others if not any(occurrences(t, a) for a in answers)]
    if len(empty) >= 2:
        yield Group(
            question,
            tuple(rng.sample(empty, min(3, len(empty)))),
            "none",
            answers=tuple(answers),
            source=source,
            qid=qid,
        )


def _titled(title: str, text: str, headings: bool) -> str:
    """A paragraph as the reader reads it: with its title on a first line when `headings`."""
    return f"{title}\n{text}" if headings and title else text


def hotpotqa(path: Path, rng: random.Random, headings: bool = False) -> Iterator[Group]:
    for line in path.open(encoding="utf-8"):
        row = json.loads(line)
        support = {title for title, _ in row["supporting_facts"]}
        texts = {
            c["title"]: _titled(c["title"], "".join(c["sentences"]).strip(), headings)
            for c in row["context"]
        }
        gold = [t for title, t in texts.items() if title in support]
        others = [t for title, t in texts.items() if title not in support]
        yield from _positive(
            row["id"], row["question"], gold, others, row["answers"], rng, "hotpotqa-train"
        )


def musique(path: Path, rng: random.Random, headings: bool = False) -> Iterator[Group]:
    for line in path.open(encoding="utf-8"):
        row = json.loads(line)
        texts = [(_titled(c["title"], c["text"], headings), c) for c in row["context"]]
        gold = [t for t, c in texts if c["is_supporting"]]
        others = [t for t, c in texts if not c["is_supporting"]]
        yield from _positive(
            row["id"], row["question"], gold, others, row["answers"], rng, "musique-train"
        )
        found: list[str] = []
        for n, step in enumerate(row.get("decomposition") or []):
            asked = re.sub(r"#(\d)", functools.partial(_nth, list(found)), step["question"])
            found.append(step.get("answer", ""))
            holding = [t for t in gold if occurrences(t, found[-1])]
            if holding and "#" not in asked:
                yield from _positive(
                    f"{row['id']}/{n}",
                    asked,
                    holding,
                    others,
                    [found[-1]],
                    rng,
                    "musique-train-step",
                )


def squad(path: Path, rng: random.Random) -> Iterator[Group]:
    """A SQuAD-format file (v1.1 or 2.0: {"data": [{"title", "paragraphs": [{"context",
    "qas"}]}]}): each question over its paragraph and up to three other paragraphs of the same
    article that none of its answers occurs in, labelled with the annotated spans; over (up to)
    three such paragraphs alone as "no answer"; a 2.0 question marked impossible is "no answer"
    over its own paragraph. The question id is prefixed by its article and paragraph, so that
    validation holds out whole paragraphs with all their questions."""
    try:
        articles = json.loads(path.read_text(encoding="utf-8"))["data"]
        made = [group for article in articles for group in _article_groups(article, rng)]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"{path} cannot be read as a SQuAD-format file ({exc!r})") from exc
    yield from made


def _article_groups(article: dict[str, Any], rng: random.Random) -> Iterator[Group]:
    contexts = [p["context"] for p in article["paragraphs"]]
    for i, paragraph in enumerate(article["paragraphs"]):
        others = contexts[:i] + contexts[i + 1 :]
        for qa in paragraph["qas"]:
            qid = f"squad:{article['title']}#{i}/{qa['id']}"
            yield from _squad_groups(paragraph["context"], others, qa, qid, rng)


def _squad_groups(
    context: str, others: list[str], qa: dict[str, Any], qid: str, rng: random.Random
) -> Iterator[Group]:
    question = qa["question"].strip()
    if qa.get("is_impossible"):
        yield Group(question, (context,), "none", source="squad", qid=qid)
        return
    where = sorted({(a["answer_start"], a["answer_start"] + len(a["text"])) for a in qa["answers"]})
    where = [(a, b) for a, b in where if context[a:b].strip()]
    answers = tuple(dict.fromkeys(context[a:b] for a, b in where))
    if not where:
        return
    empty = [t for t in others if not any(occurrences(t, a) for a in answers)]
    rng.shuffle(empty)
    shown = [context, *empty[:3]]
    rng.shuffle(shown)
    marks = tuple(tuple(where) if t is context else () for t in shown)
    yield Group(question, tuple(shown), "span", marks, answers=answers, source="squad", qid=qid)
    if len(empty) >= 2:
        alone = tuple(rng.sample(empty, min(3, len(empty))))
        yield Group(question, alone, "none", answers=answers, source="squad", qid=qid)


def _nth(found: list[str], match: re.Match) -> str:
    k = int(match.group(1)) - 1
    return found[k] if 0 <= k < len(found) else match.group(0)


_NAME = re.compile(r"\b(?:[A-Z][\w'\-]+(?:\s+(?:of|de|the|and|von|van)?\s*[A-Z][\w'\-]+){0,4})")
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_NUMBER = re.compile(
    r"\b\d[\d,.]*(?:\s(?:million|billion|thousand|percent|km|miles|metres|meters|feet))?\b"
)


def cloze(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    """A question made from `sentence` by putting a question word in place of a year, a
    number or a name that is not the sentence's first words; None when none fits."""
    choices = []
    for m in _YEAR.finditer(sentence):
        choices.append(
            (
                m,
                "in what year"
                if sentence[max(0, m.start() - 3) : m.start()] == "in "
                else "what year",
            )
        )
    for m in _NUMBER.finditer(sentence):
        if not _YEAR.fullmatch(m.group(0)):
            choices.append((m, "how many"))
    for m in _NAME.finditer(sentence):
        if m.start() > 0 and len(m.group(0)) > 2:
            choices.append((m, "who or what"))
    if not choices:
        return None
    m, word = rng.choice(choices)
    start = m.start() - (3 if word == "in what year" else 0)
    question = (sentence[:start] + word + sentence[m.end() :]).strip().rstrip(".") + "?"
    if len(question) < 25:
        return None
    return question, m.group(0)


def clozes(corpus: Path, count: int, rng: random.Random) -> Iterator[Group]:
    """`count` cloze groups from the paragraphs of `corpus` (a JSONL of {id, title, text})."""
    from ragteam.common.text import sentences

    rows = [json.loads(line) for line in corpus.open(encoding="utf-8")]
    texts = [r["text"] for r in rows if len(r["text"]) > 80]
    made = 0
    for _ in range(count * 4):
        if made >= count:
            return
        text = rng.choice(texts)
        spans = sentences(text)
        a, b = rng.choice(spans)
        asked = cloze(text[a:b], rng)
        if asked is None:
            continue
        question, answer = asked
        where = tuple(s for s in occurrences(text, answer) if a <= s[0] < b)
        if not where:
            continue
        others = rng.sample(texts, min(3, len(texts)))
        shown = [text, *others] if rng.random() < 0.5 else [text]
        rng.shuffle(shown)
        marks = tuple(where if t is text else () for t in shown)
        yield Group(
            question,
            tuple(shown),
            "span",
            marks,
            answers=(answer,),
            source="cloze",
            qid=f"cloze-{made}",
        )
        made += 1
