"""Train the yes/no decider (ragteam/reader/decider.py) on yes/no questions people asked:
- BoolQ (Clark et al. 2019, CC BY-SA 3.0): natural yes/no questions people typed into a search
  engine, each with the Wikipedia paragraph that answers it (its JSONL: question, passage,
  answer);
- docqa-train's yes/no questions over manuals (its validation files never read): each over its
  gold passage (as `index sync` cuts the file) around the sentence holding most of its
  evidence, as `read` gives the decider the sentence of its best span.

Binary cross-entropy on (question, context, yes?); all six MiniLM layers and the head trained.
Held: a tenth of BoolQ by the question's hash, and docqa-train's held files (the quarter the
reader's training holds out, by the hash of each file); the epoch of the lowest held loss is
kept."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragteam.common.atomic import write_json
from ragteam.common.text import sentences
from ragteam.errors import InputError
from ragteam.minilm.cross_encoder import CrossEncoder, sigmoid
from ragteam.minilm.settings import TopLayersSettings
from ragteam.minilm.top_layers import Loop, save_changed, top_layers_optimizer, train_top_layers
from ragteam.reader.decider import FORMAT, context, decider_model
from ragteam.reader.training.data import held_out
from ragteam.reader.training.people import (
    VALIDATION,
    _file_passages,
    _gold,
    evidence_share,
    file_group,
    part_index,
)

YESNO = TopLayersSettings(epochs=3.0, lr=4e-5, layers=6, batch=16)
PEOPLE_HELD = 0.25  # the share of docqa-train's training files held (as the reader's training)
BOOLQ_HELD = 0.1
PEOPLE_REPEAT = 3  # each docqa-train question is seen this many times an epoch


@dataclass(frozen=True)
class Asked:
    """One yes/no question over the context that decides it."""

    question: str
    context: str
    yes: bool
    source: str  # "boolq" or "people"
    held: bool


def boolq_examples(path: Path) -> list[Asked]:
    """BoolQ's rows (question, passage, answer) as examples; a tenth held by hash."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            q = row["question"].strip()
            q = q[:1].upper() + q[1:] + ("" if q.endswith("?") else "?")
            held = held_out("boolq/" + row["question"], BOOLQ_HELD)
            out.append(Asked(q, row["passage"], bool(row["answer"]), "boolq", held))
    if not out:
        raise InputError(f"{path} holds no BoolQ rows (question, passage, answer)")
    return out


def deciding_sentence(text: str, evidence: str) -> tuple[int, int]:
    """The span of the sentence of `text` holding most of `evidence`'s words."""
    found = sentences(text) or [(0, len(text))]
    return max(found, key=lambda s: evidence_share(text[s[0] : s[1]], evidence))


def people_examples(folder: Path, work: Path) -> Iterator[Asked]:
    """docqa-train's yes/no questions of its training files, each over its gold passage."""
    parts = sorted(p for p in folder.iterdir() if (p / "questions.jsonl").is_file())
    if not parts:
        raise InputError(f"{folder} holds no PART/questions.jsonl: name a docqa-train folder")
    for part in parts:
        index = part_index(part, work)
        by_file = _file_passages(index)
        for line in (part / "questions.jsonl").read_text(encoding="utf-8").splitlines():
            q = json.loads(line) if line.strip() else {}
            answers = [a.lower() for a in q.get("answers", [])]
            if not answers or answers[0] not in ("yes", "no"):
                continue
            name = Path(q["file"]).name
            gold = _gold(q, by_file.get(name, []), False) if name not in VALIDATION else []
            if not gold:
                continue
            text = gold[0].text
            start, end = deciding_sentence(text, q["evidence"])
            held = held_out(file_group(part.name, q), PEOPLE_HELD)
            around = context(text, start, end)
            yield Asked(q["question"], around, answers[0] == "yes", "people", held)


def logits(model: CrossEncoder, chunk: Sequence[Asked]) -> Any:
    """The decider's logits of "yes" for a batch of examples."""
    return model.forward(model.batch([a.question for a in chunk], [a.context for a in chunk]))


def scores(model: CrossEncoder, asked: Sequence[Asked], batch: int = 32) -> list[float]:
    import torch

    out: list[float] = []
    with torch.inference_mode():
        for n in range(0, len(asked), batch):
            out += [sigmoid(float(x)) for x in logits(model, asked[n : n + batch])]
    return out


def evaluate(model: CrossEncoder, asked: Sequence[Asked]) -> dict[str, Any]:
    """Held loss (all held), and accuracy at 0.5 per source."""
    got = scores(model, asked)
    loss = -sum(
        math.log(max(1e-6, p if a.yes else 1 - p)) for p, a in zip(got, asked, strict=True)
    ) / max(1, len(asked))
    row: dict[str, Any] = {"loss": round(loss, 4)}
    for source in ("boolq", "people"):
        pairs = [(p, a) for p, a in zip(got, asked, strict=True) if a.source == source]
        right = sum((p >= 0.5) == a.yes for p, a in pairs)
        row[f"{source}_accuracy"] = round(right / max(1, len(pairs)), 4)
        row[f"{source}_held"] = len(pairs)
    return row


def train_yesno(
    people: Path,
    boolq: Path,
    work: Path,
    out: Path,
    settings: TopLayersSettings = YESNO,
    report: Callable[[str], None] = lambda _: None,
    on_step: Callable[[int, int, float], None] = lambda *_: None,
) -> dict[str, Any]:
    """Train on BoolQ (`boolq`, its JSONL) and docqa-train (`people`, its parts' indexes kept
    under `work`); writes `out` (.safetensors) and its record (.json beside it)."""
    import torch

    asked = boolq_examples(boolq) + list(people_examples(people, work))
    train = [a for a in asked if not a.held]
    train += [a for a in train if a.source == "people"] * (PEOPLE_REPEAT - 1)
    held = [a for a in asked if a.held]
    torch.manual_seed(settings.seed)
    model = decider_model(settings.threads or None)
    optimizer = top_layers_optimizer(model, settings.layers, settings.lr, settings.head_lr)
    bce = torch.nn.BCEWithLogitsLoss()

    def loss(chunk: list[Asked]) -> Any:
        return bce(logits(model, chunk), torch.tensor([float(a.yes) for a in chunk]))

    chosen: list[dict[str, Any]] = []

    def keep(row: dict[str, Any]) -> None:
        chosen.append(row)
        card = json.dumps({**row, "settings": asdict(settings)})
        save_changed(model, settings.layers, out, {"format": FORMAT, "card": card})

    loop = Loop(settings, train, held, loss, lambda h: evaluate(model, h), report, on_step)
    history = train_top_layers(model, optimizer, loop, keep)
    counts = {
        f"{s}_{'held' if h else 'train'}": sum(a.source == s and a.held == h for a in asked)
        for s in ("boolq", "people")
        for h in (False, True)
    }
    record = {"settings": asdict(settings), "examples": counts, "history": history}
    record["chosen"] = chosen[-1] if chosen else None
    write_json(out.with_suffix(".json"), record)
    return record
