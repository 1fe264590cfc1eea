"""docs/extending.md stays true: its strategy example, taken from the page, installed as a
package (a real dist-info with the page's entry point), answers through the ordinary paths."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from ragteam import answer
from ragteam.errors import InputError
from ragteam.llm import FakeModel
from ragteam.strategies import available, make_strategy, strategy_roles

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def _install(tmp_path: Path, monkeypatch, module: str, group: str) -> str:
    """The page's `# file: MODULE.py` block and its `group` entry point, installed as a real
    dist-info on sys.path; returns the entry point's name."""
    code = next(b for b in _blocks("python") if b.startswith(f"# file: {module}.py"))
    entry = next(b for b in _blocks("toml") if f'"{group}"' in b)
    name, target = (part.strip().strip('"') for part in entry.splitlines()[1].split("="))
    (tmp_path / f"{module}.py").write_text(code)
    info = tmp_path / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {target}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


@pytest.fixture
def installed_example(tmp_path, monkeypatch):
    yield _install(tmp_path, monkeypatch, "pick_one", "ragteam.strategies")
    sys.modules.pop("pick_one", None)


def test_the_documented_strategy_installs_and_answers(installed_example, bm25_index_dir):
    assert installed_example in available()
    assert strategy_roles(installed_example) == ("judge", "answerer")

    def reply(messages, params):
        if params.get("json_schema"):
            return '{"passage": 1}'
        return "Hevik"

    result = answer(
        "Where was Emrik Tollan born?",
        index=bm25_index_dir,
        strategy=installed_example,
        model=FakeModel(reply),
    )
    # the support check cites what backs "Hevik": the passage the strategy picked comes first
    assert result.text == "Hevik" and result.citations[0].passage_id == "halvard-05"
    roles = [s.role for s in result.trace.steps]
    assert roles == ["retriever", "judge", "answerer", "checker"]
    # backed, but the reader's own confident answer is "village of Hevik on the island of
    # Sarnby": a written answer is green only when the reader would give those words
    assert result.support.sure is False and result.grounding().level == "partly_supported"
    with pytest.raises(InputError, match="between 1 and 20"):  # the range it declares
        make_strategy(installed_example, {"k": "50"})


@pytest.fixture
def installed_encoder(tmp_path, monkeypatch):
    yield _install(tmp_path, monkeypatch, "hashed_words", "ragteam.encoders")
    sys.modules.pop("hashed_words", None)


def test_the_documented_encoder_installs_and_builds_a_dense_index(installed_encoder, tmp_path):
    from typer.testing import CliRunner

    from ragteam.cli import app
    from ragteam.commands.demo import demo_corpus_path
    from ragteam.retrieval import load_index
    from ragteam.retrieval.encoder_registry import encoder_names

    assert installed_encoder in encoder_names()
    corpus = demo_corpus_path()
    out = tmp_path / "idx"
    args = ["index", "build", str(corpus), "--out", str(out), "--retriever", "dense"]
    result = CliRunner().invoke(app, [*args, "--encoder", installed_encoder])
    assert result.exit_code == 0, result.output
    index = load_index(out)  # the manifest's backend name finds the plugin again
    hits = index.retrieve("Wrenhold Lighthouse engineer", 3)
    assert hits and any("Wrenhold" in h.title or "Wrenhold" in h.text for h in hits)
    wrong = CliRunner().invoke(app, [*args, "--encoder", "no-such-encoder"])
    assert wrong.exit_code != 0 and installed_encoder in wrong.output


def test_the_documented_converter_installs_and_a_sync_reads_its_format(tmp_path, monkeypatch):
    from ragteam.retrieval import load_index, sync_folder
    from ragteam.retrieval.index import IndexSettings

    name = _install(tmp_path, monkeypatch, "srt_reader", "ragteam.converters")
    assert name == "srt"
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "film.SRT").write_text(
        "1\n00:00:01,000 --> 00:00:03,000\nThe lighthouse is dark tonight.\n\n"
        "2\n00:01:10,000 --> 00:01:12,000\nRow to the island of Korr.\n"
    )
    (folder / "broken.srt").write_text("no cues here")
    report = sync_folder(folder, tmp_path / "ix", index=IndexSettings(retriever="bm25"))
    status = {s.path: (s.status, s.reason) for s in report.files}
    assert status["film.SRT"][0] == "read" and "no timing line" in status["broken.srt"][1]
    hit = load_index(tmp_path / "ix").retrieve("island of Korr", k=1)[0]
    assert hit.locator.describe() == "film.SRT § 00:01:10,000"


def test_the_documented_retriever_installs_and_an_index_searches_with_it(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from ragteam.cli import app
    from ragteam.commands.demo import demo_corpus_path
    from ragteam.retrieval import load_index, retriever_names

    name = _install(tmp_path, monkeypatch, "word_count", "ragteam.retrievers")
    assert name == "wordcount" and name in retriever_names()
    out = tmp_path / "idx"
    args = ["index", "build", str(demo_corpus_path()), "--out", str(out), "--retriever", name]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    index = load_index(out)
    assert index.manifest.records == {"wordcount": {"lowercase": True}}
    hits = index.retrieve("wrenhold lighthouse engineer", 3)
    assert hits and "wrenhold" in hits[0].text.lower()
    sys.modules.pop("word_count", None)


def test_the_documented_support_layer_installs_and_decides(tmp_path, monkeypatch):
    from ragteam.support.layers import layer_names
    from ragteam.support.stage import check_support, support_settings
    from ragteam.types import Passage

    name = _install(tmp_path, monkeypatch, "numbers_layer", "ragteam.support_layers")
    try:
        assert name == "numbers" and "numbers" in layer_names()
        passage = Passage("p1", "Harbour", "The harbour was dredged in 1931 to 12 metres.")
        question = "When was the harbour dredged?"
        right = check_support(
            question, "It was dredged in 1931.", [passage], support_settings(name)
        )
        wrong = check_support(
            question, "It was dredged in 1913.", [passage], support_settings(name)
        )
        assert right.layer == "numbers" and right.cited == ["p1"]
        assert not wrong.sentences[0].supported  # the lexical share alone would not tell
    finally:
        sys.modules.pop("numbers_layer", None)
