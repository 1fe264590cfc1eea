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
  over several lines; and over the folder's book, when the folder holds one PDF of its own
  (a manual shipped both as HTML pages and as one typeset PDF, as Debian's docbook manuals
  are): a typeset table's rows, found among the whole book's passages.
- With `varied`, a table question is asked in one of several wordings (`CELL_WORDINGS`,
  `KEY_WORDINGS`; the first of each half the time), since people do not all ask alike.
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

from ragteam.common.text import sentences
from ragteam.reader.training.data import Group, cloze, occurrences

MAX_PER_TABLE = 6  # questions from one table, so that no table dominates
HTML = (".html", ".htm", ".xhtml")
WRAPPED = 3  # lines a table row's key may be wrapped over (a printed PDF's long cell)
_WORD = re.compile(r"\w+")


# the wordings of a table question: a cell asked by its row's key (an attribute by the
# heading above it), and a row's key asked by one of its cells; the first is the only one
# used without `varied`
CELL_WORDINGS = (
    "What is the {column} of {key}?",
    "What {column} does {key} have?",
    "{key}: what is its {column}?",
    "Give the {column} of {key}.",
    "What is {key}'s {column}?",
)
KEY_WORDINGS = (
    "Which {name} has the {column} {cell}?",
    "Which {name} has {cell} as its {column}?",
    "Name the {name} whose {column} is {cell}.",
    "{cell}: which {name} is that?",
    "What is the {name} for {cell}?",
    "Which {name} goes with the {column} {cell}?",
)


def worded(wordings: tuple[str, ...], rng: random.Random, varied: bool, **parts: str) -> str:
    """One wording filled in: the first, or with `varied` the first half the time and
    another at random otherwise (the rng is not drawn from without `varied`)."""
    if varied and rng.random() >= 0.5:
        return rng.choice(wordings[1:]).format(**parts)
    return wordings[0].format(**parts)


@dataclass(frozen=True)
class MadeQuestion:
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


def table_questions(
    table,  # noqa: ANN001
    rng: random.Random,
    most: int = MAX_PER_TABLE,
    varied: bool = False,
) -> list[MadeQuestion]:
    """The questions one HTML table gives, at most `most`, chosen at random; with `varied`,
    each in one of several wordings."""
    rows = [_cells(tr) for tr in table.iter("tr")]
    rows = [r for r in rows if r]
    asked: list[MadeQuestion] = []
    header_row = bool(rows) and all(th for _, th in rows[0])
    if rows and all(len(r) == 2 for r in rows) and len(rows) >= 2 and not header_row:
        subject = _heading_before(table).rstrip(" ¶#:").strip()
        key = subject.split()[0] if subject else ""
        for (name, is_th), (value, _) in rows:
            attribute = name.rstrip(":").strip().lower()
            if len(key) >= 4 and (is_th or name.endswith(":")) and _short(value, 8) and attribute:
                question = worded(CELL_WORDINGS, rng, varied, column=attribute, key=subject)
                asked.append(MadeQuestion(question, value, key, True))
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
                    question = worded(CELL_WORDINGS, rng, varied, column=header[j], key=key)
                    asked.append(MadeQuestion(question, cell, key))
                elif 4 <= len(cell.split()) <= 25 and column.count(cell) == 1 and _name(header[0]):
                    question = worded(
                        KEY_WORDINGS, rng, varied, name=header[0], column=header[j], cell=cell
                    )
                    asked.append(MadeQuestion(question, key, cell))
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


def _grouped(qid: str, asked: MadeQuestion, passages: list[str], rng: random.Random, source: str):  # noqa: ANN202
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


def _marks(text: str, asked: MadeQuestion) -> tuple[tuple[int, int], ...]:
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
    folder: Path,
    tables: int,
    clozes: int,
    rng: random.Random,
    pdfs: bool = False,
    varied: bool = False,
) -> Iterator[Group]:
    """At most `tables` table questions and `clozes` cloze questions (each with its no-answer
    group) from the files under `folder`, in a seeded order of the files; with `pdfs`, at most
    `tables` more over the files' printed copies and as many over their folders' books; with
    `varied`, the table questions in varied wordings."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not _is_printed(p))
    rng.shuffle(files)
    made = dict.fromkeys(("doc-table", "doc-cloze", "doc-table-pdf", "doc-table-book"), 0)
    wanted = {"doc-table": tables, "doc-cloze": clozes}
    wanted |= {"doc-table-pdf": tables if pdfs else 0, "doc-table-book": tables if pdfs else 0}
    books: dict[Path, list[str]] = {}  # a book's passages, converted once
    for path in files:
        if all(made[k] >= wanted[k] for k in made):
            return
        try:
            passages = books[path] if path in books else file_passages(path)
        except Exception:  # noqa: BLE001 - a file the converters refuse gives no questions
            continue
        if len(passages) < 3:
            continue
        tag = hashlib.sha256(str(path.relative_to(folder)).encode()).hexdigest()[:12]
        asked = _asked(path, passages, rng, varied, made["doc-table"] < tables)
        tabled = any(source == "doc-table" for source, _ in asked)
        copies = _copies(path, books) if tabled and pdfs else []
        for n, (source, one) in enumerate(asked):
            readings = [(source, f"{tag}/{n}", passages)]
            if source == "doc-table":
                # the same file's tag: validation holds out a file with its printed copies
                readings += [(kind, f"{tag}/{n}{mark}", texts) for kind, mark, texts in copies]
            for kind, qid, texts in readings:
                if made[kind] < wanted[kind]:
                    groups = list(_grouped(qid, one, texts, rng, kind))
                    made[kind] += bool(groups)
                    yield from groups


def _asked(
    path: Path, passages: list[str], rng: random.Random, varied: bool, tables: bool
) -> list[tuple[str, MadeQuestion]]:
    """A file's questions, each with its source: its tables' (an HTML file, when `tables`),
    then clozes from three of its passages."""
    import lxml.html

    asked: list[tuple[str, MadeQuestion]] = []
    if path.suffix.lower() in HTML and tables:
        root = lxml.html.parse(str(path)).getroot()
        for table in root.iter("table") if root is not None else ():
            asked += [("doc-table", a) for a in table_questions(table, rng, varied=varied)]
    for text in rng.sample(passages, min(len(passages), 3)):
        spans = sentences(text)
        a, b = rng.choice(spans) if spans else (0, 0)
        made_cloze = cloze(text[a:b], rng) if prose(text[a:b]) else None
        if made_cloze:
            asked.append(("doc-cloze", MadeQuestion(made_cloze[0], made_cloze[1], text[a:b])))
    return asked


def _copies(path: Path, books: dict[Path, list[str]]) -> list[tuple[str, str, list[str]]]:
    """Where else a file's table questions are read, as (source, id mark, passages): its
    printed copy, and its folder's book."""
    copies = [("doc-table-pdf", "p", _printed(path))]
    book = _book(path.parent)
    if book is not None and book != path:
        if book not in books:
            try:
                books[book] = file_passages(book)
            except Exception:  # noqa: BLE001 - a book the converter refuses gives no questions
                books[book] = []
        copies.append(("doc-table-book", "b", books[book]))
    return [c for c in copies if c[2]]


def _book(folder: Path) -> Path | None:
    """The folder's one PDF of its own (no printed copy of an HTML file), or None."""
    own = [p for p in folder.glob("*.pdf") if p.is_file() and not _is_printed(p)]
    return own[0] if len(own) == 1 else None


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
