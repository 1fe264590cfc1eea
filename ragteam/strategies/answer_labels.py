"""Label biases for `oner`'s answerer on the embedded model, for questions whose answer is a
label (true/false claims, multiple choice).

The 135M generator says "False" to every PubHealth claim (docs/benchmarks.md §32: 100 of 100,
accuracy 0.40 where always saying "true" scores 0.60). As for SMART's trained agent
(`smart.labels`), the remedy is a bias per label added to its first token's logit ("calibrate
before use", Zhao et al. 2021), fitted on *training* rows (`ragteam train labels answerer`),
never on a test set. The biases are fitted for one model and one answerer prompt: the file
names both, and any other model or prompt gets none (a served model's token ids are its own)."""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from ragteam.common.once import loaded_once
from ragteam.errors import InputError
from ragteam.formats import Posed

DATA_FILE = Path(__file__).resolve().parent.parent / "data" / "answerer-labels.json"


def spellings(tokenize: Any, label: str) -> list[int]:
    """The first tokens of a label as a reply may begin with it ("True", "true"; an option's
    letter as it is, since "a" is also a word)."""
    forms = [label] if len(label) == 1 else [label, label.capitalize(), label.lower()]
    return list(dict.fromkeys(int(tokenize(form)[0]) for form in forms))


@functools.cache
def template_digest() -> str:
    """What the answerer's prompt is, apart from what fills it: biases fitted under another
    prompt do not apply."""
    from ragteam.agents.answerers import ANSWERER

    turns = ANSWERER.messages(passages="{passages}", question="{question}")
    return hashlib.sha256(json.dumps(turns, sort_keys=True).encode()).hexdigest()[:16]


def label_bias(model: Any, posed: Posed, path: Path | None = None) -> dict[int, float]:
    """Token id -> bias for the labels of `posed` when `model` is the one the biases in `path`
    (the shipped file by default) were fitted for; empty otherwise, and for an open question."""
    fmt, labels = posed.format, posed.labels
    path = path or DATA_FILE
    if fmt == "open" or not path.is_file() or not hasattr(model, "tokenize"):
        return {}
    fitted = _load(path, path.stat().st_mtime_ns)
    if fitted["model"] != getattr(model, "identity", None) or fitted["template"] != (
        template_digest()
    ):
        return {}
    biases = fitted["biases"].get(fmt, {})
    out: dict[int, float] = {}
    for label in labels:
        if biases.get(label):
            out |= dict.fromkeys(spellings(model.tokenize, label), float(biases[label]))
    return out


@loaded_once(maxsize=4)
def _load(path: Path, _mtime_ns: int) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        biases = {
            str(fmt): {str(label): float(b) for label, b in per.items()}
            for fmt, per in data["biases"].items()
        }
        return {"model": str(data["model"]), "template": str(data["template"]), "biases": biases}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(
            f"{path} is not a label bias file ({exc}); rebuild it with `ragteam train labels "
            "answerer` or reinstall ragteam"
        ) from exc
