"""Reader training groups from questions people wrote over real documents (docqa-train's
layout: PART/files/ and PART/questions.jsonl, each question with its file, its answers and the
evidence sentence it was read from).

Each part's files are synced into an index under `work` exactly as `index sync` cuts them, and
every passage is read as the reader reads it (`Viewed`: its heading path, then its text):
- an answerable question is read over its gold passages (those of its file that hold one of
  its answers and most of its evidence) and distractors: what search brings for it that holds
  none of its answers, and one passage of the same file at random (hard and easy negatives);
- a yes/no question is labelled yes or no on the passage of its evidence;
- an unanswerable question over what search brings for it is "no answer", and so is an
  answerable one over distractors alone that share little of its evidence.
Files named in `exclude` (a set's validation files) give no group. A question's id starts
with its file's hash, so held groups hold out whole files."""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragteam.errors import InputError
from ragteam.reader.training.data import Group, occurrences
from ragteam.types import Passage

# docqa-train's validation files (its README's table): never trained or fitted on
VALIDATION = (
    "geometry.pdf",
    "Options.html",
    "config.rst",
    "chrony.conf.5.html",
    "arrow-guide.pptx",
    "maxima_13.html",
    "04060109.html",
    "xlfd.html",
    "systemd.service.5.txt",
    "tabulate-README.docx",
)
# the part whose unanswerable questions (they name no file) its README holds with its
# validation file: they are validation questions too
HELD_UNANSWERABLE = "office"
SEARCHED = 8  # hits a question's distractors are drawn from
EXCLUDED_SLACK = 8  # more hits searched, for those of excluded files left out
GOLD_MAX = 2  # gold passages of one question at most
EVIDENCE_SHARE = 0.5  # of the evidence's words a gold passage must hold
CLOSE = 0.85  # a second gold passage holds at least this share of what the first holds
NEAR = 0.3  # a distractor sharing this much of the evidence is not read as "no answer"
_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def evidence_share(text: str, evidence: str) -> float:
    """The share of the evidence's distinct words that `text` holds."""
    wanted = _words(evidence)
    return len(wanted & _words(text)) / len(wanted) if wanted else 0.0


def is_validation(
    part: str, question: dict[str, Any], exclude: tuple[str, ...] = VALIDATION
) -> bool:
    """Whether `question` of `part` is one of docqa-train's validation questions: a validation
    file's (`exclude`), or an unanswerable one of the part that holds them with its file."""
    if question["file"] is None:
        return part == HELD_UNANSWERABLE
    return Path(question["file"]).name in exclude


def file_group(part: str, question: dict[str, Any]) -> str:
    """The held-out group of a question of `part`: its file's (an unanswerable question, which
    has none, is a group alone), so held groups hold out whole files."""
    where = question["file"] or question["id"]
    return "people-" + hashlib.sha256(f"{part}/{where}".encode()).hexdigest()[:12]


def part_index(part: Path, work: Path, settings: Any = None) -> Any:
    """The index of `part`/files, synced into `work`/PART/ix (with `index sync`'s defaults
    unless `settings`, an IndexSettings, say otherwise: passages are cut alike)."""
    from ragteam.retrieval import load_index, sync_folder

    out = work / part.name / "ix"
    out.parent.mkdir(parents=True, exist_ok=True)
    sync_folder(part / "files", out, index=settings)
    return load_index(out)


def _viewed(passage: Passage, question: str, headings: bool) -> str:
    from ragteam.reader.view import Viewed

    return Viewed.of(passage, question, headings).text


def _file_name(passage: Passage) -> str:
    """The name of the file a passage was cut from ("" for none)."""
    return Path(passage.locator.source).name if passage.locator is not None else ""


def _file_passages(index: Any) -> dict[str, list[Passage]]:
    by_file: dict[str, list[Passage]] = {}
    for p in index.passages:
        if p.locator is not None:
            by_file.setdefault(_file_name(p), []).append(p)
    return by_file


def _gold(question: dict[str, Any], candidates: list[Passage], headings: bool) -> list[Passage]:
    """The passages of the question's file that hold most of its evidence (and, for a span
    answer, one of its answers), best first, at its page where a page is given."""
    answers = [a for a in question["answers"] if a.lower() not in ("yes", "no")]
    scored = []
    for p in candidates:
        text = _viewed(p, question["question"], headings)
        if answers and not any(occurrences(text, a) for a in answers):
            continue
        share = evidence_share(p.text, question["evidence"])
        on_page = question.get("page") is None or p.locator.page == question["page"]
        if share >= EVIDENCE_SHARE:
            scored.append((on_page, share, p))
    scored.sort(key=lambda t: (t[0], t[1]), reverse=True)
    top = scored[0][1] if scored else 0.0  # another passage saying much less is not gold
    return [p for _, share, p in scored[:GOLD_MAX] if share >= CLOSE * top]


def question_groups(
    question: dict[str, Any],
    index: Any,
    by_file: dict[str, list[Passage]],
    qid: str,
    rng: random.Random,
    headings: bool = False,
    exclude: tuple[str, ...] = VALIDATION,
) -> Iterator[Group]:
    """The groups of one question (see the module's doc); each passage read after its
    heading path when `headings` (for weights that read headings). A passage of an `exclude`d
    file (the validation files, which share their part's index) is never shown: not even as a
    distractor."""
    asked = question["question"]
    found = index.retrieve(asked, k=SEARCHED + EXCLUDED_SLACK)
    hits = [p for p in found if _file_name(p) not in exclude][:SEARCHED]
    if not question["answers"]:
        texts = tuple(_viewed(p, asked, headings) for p in hits[:4])
        if texts:
            yield Group(asked, texts, "none", source="people", qid=qid)
        return
    name = Path(question["file"]).name
    gold = _gold(question, by_file.get(name, []), headings)
    if not gold:
        return
    answers = tuple(question["answers"])
    polar = answers[0].lower() in ("yes", "no")
    golden = {p.id for p in gold}

    def empty(p: Passage) -> bool:
        text = _viewed(p, asked, headings)
        return polar or not any(occurrences(text, a) for a in answers)

    near = [p for p in hits if p.id not in golden and empty(p)]
    far = [p for p in by_file.get(name, []) if p.id not in golden and empty(p)]
    shown = gold[:1] if polar else list(gold)
    shown += near[:2] + rng.sample(far, min(1, len(far)))
    rng.shuffle(shown)
    texts = tuple(_viewed(p, asked, headings) for p in shown)
    if polar:
        marks = tuple(n for n, p in enumerate(shown) if p.id in golden)
        yield Group(
            asked, texts, answers[0].lower(), gold=marks, answers=answers, source="people", qid=qid
        )
    else:
        spans = tuple(
            tuple(s for a in answers for s in occurrences(t, a)) if p.id in golden else ()
            for p, t in zip(shown, texts, strict=True)
        )
        yield Group(asked, texts, "span", spans, answers=answers, source="people", qid=qid)
    alone = [p for p in near if evidence_share(p.text, question["evidence"]) < NEAR]
    if not polar and len(alone) >= 2 and rng.random() < 0.5:
        texts = tuple(_viewed(p, asked, headings) for p in alone[:3])
        yield Group(asked, texts, "none", answers=answers, source="people", qid=qid + "-none")


def people_groups(
    folder: Path,
    work: Path,
    rng: random.Random,
    exclude: tuple[str, ...] = VALIDATION,
    settings: Any = None,
    headings: bool = False,
) -> Iterator[Group]:
    """The groups of every part under `folder` (a folder holding questions.jsonl and files/,
    or a folder of such parts), its files' indexes kept under `work` (`part_index`)."""
    parts = (
        [folder]
        if (folder / "questions.jsonl").is_file()
        else sorted(p for p in folder.iterdir() if (p / "questions.jsonl").is_file())
    )
    if not parts:
        raise InputError(f"{folder} holds no questions.jsonl: name a docqa-train folder")
    for part in parts:
        index = part_index(part, work, settings)
        by_file = _file_passages(index)
        rows = [json.loads(x) for x in (part / "questions.jsonl").read_text().splitlines() if x]
        for q in rows:
            if is_validation(part.name, q, exclude):
                continue
            qid = f"{file_group(part.name, q)}/{q['id']}"
            yield from question_groups(q, index, by_file, qid, rng, headings, exclude)
