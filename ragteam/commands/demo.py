"""The bundled demo: a small fictional corpus with questions that need two passages."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from ragteam._version import __version__
from ragteam.common import paths

DEMO_QUESTION = "In which village was the engineer who built the Wrenhold Lighthouse born?"


def demo_corpus_path() -> Path:
    return Path(str(resources.files("ragteam.data").joinpath("demo_corpus.jsonl")))


def demo_questions() -> list[dict]:
    text = resources.files("ragteam.data").joinpath("demo_questions.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def demo_index_dir() -> Path:
    return paths.demo_index_dir(__version__)
