"""Reader training groups made by rule from real documents (a folder the caller names), read
as ragteam reads them: each file converted by its converter and cut into passages exactly as
`index sync` cuts them, so the reader learns from the text it will see.

- Table questions (HTML tables, read with lxml): in a table with a header row, "What is the
  <column> of <row key>?" answers a short cell, and "Which <key column> has the <column>
  <cell>?" the row's key; in a two-column attribute table ("Default: | ..."), "What is the
  <attribute> of <the heading above it>?". A question is kept when one of the file's passages
  holds both its key and its answer; that passage is the gold one.
- The same table questions over the file printed to PDF (a sibling NAME.html.pdf, made by
  `bench/print_pdfs.py`), when asked: the rows as a PDF's lines give them, a long cell wrapped
  over several lines.
- Cloze questions from the passages' sentences (training/reader_data.cloze).
Distractors are other passages of the same file: the two that share most words with the
question, and two at random (hard and easy negatives). Every question also yields a group over
distractors alone ("no answer"). Question ids start with the file's hash, so validation holds
out whole files (`held_out` on the part before the slash)."""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ragteam.text import sentences
from ragteam.training.reader_data import Group, cloze, occurrences

MAX_PER_TABLE = 6  # questions from one table, so that no table dominates
HTML = (".html", ".htm", ".xhtml")
WRAPPED = 3  # lines a table row's key may be wrapped over (a printed PDF's long cell)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Asked:
    question: str
    answer: str
    key: str  # words the gold passage must hold beside the answer
    # the answer must stand once in the whole file (an attribute table's value); otherwise
    # on the key's own line (a table row) or, for a cloze, in its sentence
    unique: bool = False


def _cells(tr) -> list[tuple[str, bool]]:  # noqa: ANN001
    return [
        (" ".join(c.text_content().split()), c.tag == "th")
        for c in tr
        if isinstance(c.tag, str) and c.tag in ("td", "th")
    ]


def _short(text: str, words: int) -> bool:
    return 0 < len(text.split()) <= words and len(text) <= 60 and any(ch.isalnum() for ch in text)


def _key(text: str) -> bool:
    """A row key a question can name: short, with letters, not a bare number or yes/no."""
    letters = sum(ch.isalpha() for ch in text)
    return _short(text, 8) and letters >= 2 and len(text) >= 3


def _name(header: str) -> bool:
    return 0 < len(header.split()) <= 4 and any(ch.isalpha() for ch in header)


def _heading_before(table) -> str:  # noqa: ANN001
    for el in table.itersiblings(preceding=True):
        if isinstance(el.tag, str) and re.fullmatch(r"h[1-4]", el.tag):
            return " ".join(el.text_content().split())
    parent = table.getparent()
    return _heading_before(parent) if parent is not None and parent.tag != "body" else ""


def table_questions(table, rng: random.Random, most: int = MAX_PER_TABLE) -> list[Asked]:  # noqa: ANN001
    """The questions one HTML table gives, at most `most`, chosen at random."""
    rows = [_cells(tr) for tr in table.iter("tr")]
    rows = [r for r in rows if r]
    asked: list[Asked] = []
    header_row = bool(rows) and all(th for _, th in rows[0])
    if rows and all(len(r) == 2 for r in rows) and len(rows) >= 2 and not header_row:
        subject = _heading_before(table).rstrip(" ¶#:").strip()
        key = subject.split()[0] if subject else ""
        for (name, is_th), (value, _) in rows:
            attribute = name.rstrip(":").strip().lower()
            if len(key) >= 4 and (is_th or name.endswith(":")) and _short(value, 8) and attribute:
                asked.append(Asked(f"What is the {attribute} of {subject}?", value, key, True))
    elif len(rows) >= 3 and header_row and len(rows[0]) >= 2:
        header = [h.lower() for h, _ in rows[0]]
        body = [[c for c, _ in r] for r in rows[1:] if len(r) == len(header)]
        keys = [r[0] for r in body]
        for j in range(1, len(header)):
            column = [r[j] for r in body]
            for r in body:
                key, cell = r[0], r[j]
                if not (_key(key) and keys.count(key) == 1 and _name(header[j]) and cell != key):
                    continue
                if _short(cell, 6):
                    asked.append(Asked(f"What is the {header[j]} of {key}?", cell, key))
                elif 4 <= len(cell.split()) <= 25 and column.count(cell) == 1 and _name(header[0]):
                    asked.append(Asked(f"Which {header[0]} has the {header[j]} {cell}?", key, cell))
    rng.shuffle(asked)
    return asked[:most]


def prose(sentence: str) -> bool:
    """A sentence of running text (a cloze from code or a table row teaches nothing)."""
    words = sentence.split()
    plain = sum(bool(re.fullmatch(r"[A-Za-z][a-z'-]*[,;:]?", w)) for w in words)
    return (
        len(words) >= 8
        and plain >= 0.7 * len(words)
        and sentence[:1].isupper()
        and sentence.rstrip().endswith(".")
        and not re.search(r"[{}$<>=|\\`#]|\n", sentence)
    )


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2}


def _holds(text: str, words: str) -> bool:
    return " ".join(words.lower().split()) in " ".join(text.lower().split())


def _distractors(question: str, others: list[str], rng: random.Random) -> list[str]:
    asked = _words(question)
    ranked = sorted(others, key=lambda t: -len(asked & _words(t)))
    hard = ranked[:2]
    rest = ranked[2:]
    return hard + rng.sample(rest, min(2, len(rest)))


def _grouped(qid: str, asked: Asked, passages: list[str], rng: random.Random, source: str):  # noqa: ANN202
    marked = [(p, _marks(p, asked)) for p in passages]
    gold = [(p, m) for p, m in marked if m]
    if not gold or (asked.unique and sum(len(occurrences(p, asked.answer)) for p in passages) > 1):
        return
    chosen, marks = rng.choice(gold)
    others = [p for p in passages if not occurrences(p, asked.answer)]
    if len(others) < 2:
        return
    shown = [chosen, *_distractors(asked.question, others, rng)]
    rng.shuffle(shown)
    spans = tuple(marks if t is chosen else () for t in shown)
    common = {"answers": (asked.answer,), "source": source, "qid": qid}
    yield Group(asked.question, tuple(shown), "span", spans, **common)
    empty = _distractors(asked.question, others, rng)[:3]
    yield Group(asked.question, tuple(empty), "none", **common)


def _marks(text: str, asked: Asked) -> tuple[tuple[int, int], ...]:
    """The answer's occurrences in `text` that answer `asked`: on a line holding the key (a
    table row, a cloze's sentence), or anywhere when the key is elsewhere in the passage."""
    found = occurrences(text, asked.answer)
    if not found or not _holds(text, asked.key):
        return ()
    if asked.unique:
        return tuple(found)
    keyed = _keyed_lines(text, asked.key)
    return tuple(s for s in found if any(a <= s[0] and s[1] <= b for a, b in keyed))


def _keyed_lines(text: str, key: str) -> list[tuple[int, int]]:
    """The (start, end) of each line holding `key`; where no line does, each run of up to
    WRAPPED lines that does (a key wrapped over lines), the shortest run from each line."""
    lines = [m.span() for m in re.finditer(r"[^\n]+", text)]
    keyed = [(a, b) for a, b in lines if _holds(text[a:b], key)]
    if keyed:
        return keyed
    runs = []
    for i, (a, _) in enumerate(lines):
        for last in lines[i + 1 : i + WRAPPED]:
            if _holds(text[a : last[1]], key):
                runs.append((a, last[1]))
                break
    return runs


def file_passages(path: Path, budget: int = 128, overlap: int = 24) -> list[str]:
    """The file's passages as `index sync` cuts them (its converter, the encoder's tokens)."""
    from ragteam.documents.base import ConvertSettings, converter_for
    from ragteam.documents.chunking import chunk
    from ragteam.retrieval.embed_cache import token_counter
    from ragteam.retrieval.index import IndexSettings

    converter = converter_for(path)
    if converter is None:
        return []
    converted = converter.convert(path, ConvertSettings())
    count, limit, _ = token_counter(IndexSettings().dense.encoder)
    return [p.text for p in chunk(converted.units, min(budget, limit), count, overlap)]


def document_groups(
    folder: Path, tables: int, clozes: int, rng: random.Random, pdfs: bool = False
) -> Iterator[Group]:
    """At most `tables` table questions and `clozes` cloze questions (each with its no-answer
    group) from the files under `folder`, in a seeded order of the files; with `pdfs`, at most
    `tables` more over the files' printed copies."""
    import lxml.html

    files = sorted(p for p in folder.rglob("*") if p.is_file() and not _is_printed(p))
    rng.shuffle(files)
    made = {"doc-table": 0, "doc-cloze": 0, "doc-table-pdf": 0}
    wanted = {"doc-table": tables, "doc-cloze": clozes, "doc-table-pdf": tables if pdfs else 0}
    for path in files:
        if all(made[k] >= wanted[k] for k in made):
            return
        try:
            passages = file_passages(path)
        except Exception:  # noqa: BLE001 - a file the converters refuse gives no questions
            continue
        if len(passages) < 3:
            continue
        tag = hashlib.sha256(str(path.relative_to(folder)).encode()).hexdigest()[:12]
        asked: list[tuple[str, Asked]] = []
        if path.suffix.lower() in HTML and made["doc-table"] < tables:
            root = lxml.html.parse(str(path)).getroot()
            for table in root.iter("table") if root is not None else ():
                asked += [("doc-table", a) for a in table_questions(table, rng)]
        for text in rng.sample(passages, min(len(passages), 3)):
            spans = sentences(text)
            a, b = rng.choice(spans) if spans else (0, 0)
            made_cloze = cloze(text[a:b], rng) if prose(text[a:b]) else None
            if made_cloze:
                asked.append(("doc-cloze", Asked(made_cloze[0], made_cloze[1], text[a:b])))
        tabled = any(source == "doc-table" for source, _ in asked)
        printed = _printed(path) if tabled and wanted["doc-table-pdf"] else []
        for n, (source, one) in enumerate(asked):
            if made[source] < wanted[source]:
                groups = list(_grouped(f"{tag}/{n}", one, passages, rng, source))
                made[source] += bool(groups)
                yield from groups
            if source == "doc-table" and printed and made["doc-table-pdf"] < tables:
                # the same file's tag: validation holds out a file and its printed copy
                groups = list(_grouped(f"{tag}/{n}p", one, printed, rng, "doc-table-pdf"))
                made["doc-table-pdf"] += bool(groups)
                yield from groups


def _is_printed(path: Path) -> bool:
    return path.suffix.lower() == ".pdf" and path.with_suffix("").suffix.lower() in HTML


def _printed(path: Path) -> list[str]:
    """The passages of the file's printed copy (NAME.html.pdf), or none."""
    copy = path.with_name(path.name + ".pdf")
    if not copy.is_file():
        return []
    try:
        return file_passages(copy)
    except Exception:  # noqa: BLE001 - a copy the converter refuses gives no questions
        return []
