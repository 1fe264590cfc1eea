"""`ragteam train labels`: the shipped label-bias files made by a command from training rows,
read through the model's public log-probabilities; the fitting keeps a format's biases only
where a two-fold estimate beats the uncalibrated accuracy; the files written are the ones the
strategies read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragteam.agents.label_fit import accuracy, fit, fit_formats
from ragteam.cli import app
from ragteam.formats import Posed

runner = CliRunner()
TRAIN = Path(__file__).resolve().parent / "data" / "train"


def _row(gold: str, true_logp: float, false_logp: float) -> dict:
    return {"format": "claim", "labels": ["false", "true"], "gold": gold,
            "logp": {"true": true_logp, "false": false_logp}}  # fmt: skip


def test_a_bias_that_fixes_a_leaning_model_is_kept_and_noise_is_not():
    # the model leans to "true" by about 1 nat: a bias on "true" of about -1 makes it right
    leaning = [_row("false", -0.4, -1.2)] * 10 + [_row("true", -0.2, -1.6)] * 10
    assert accuracy(leaning, {}) == 0.5
    fitted = fit(leaning)
    assert accuracy(leaning, fitted) == 1.0 and -1.4 <= fitted["true"] <= -0.8
    biases, report = fit_formats(leaning, ("claim", "multiple_choice"), seed=0)
    assert report["claim"]["kept"] and biases["claim"] == fitted
    assert "multiple_choice" not in report  # no rows of it
    # a model already right everywhere: no two-fold gain, nothing kept
    right = [_row("false", -1.2, -0.4)] * 6 + [_row("true", -0.2, -1.6)] * 6
    biases, report = fit_formats(right, ("claim",), seed=0)
    assert biases == {} and not report["claim"]["kept"]


def _formats_folder(tmp_path: Path) -> Path:
    rows = [json.loads(line) for line in (TRAIN / "formats4.jsonl").read_text().splitlines()]
    folder = tmp_path / "formats"
    folder.mkdir()
    claims = [r for r in rows if "choices" not in r]
    choices = [r for r in rows if "choices" in r]
    (folder / "claims_train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in claims))
    (folder / "multiple_choice_train.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in choices)
    )
    return folder


@pytest.mark.integration
def test_the_answerer_file_is_made_by_the_command_and_read_by_oner(tmp_path):
    from ragteam.llm import load_model
    from ragteam.retrieval import build_index
    from ragteam.strategies.answer_labels import label_bias, template_digest

    folder = _formats_folder(tmp_path)
    index = tmp_path / "ix"
    build_index(TRAIN / "formats_corpus_slice.jsonl", index, retriever="bm25", passage_words=0)
    out = tmp_path / "answerer-labels.json"
    args = ["train", "labels", "answerer", "--data", str(folder), "--index", str(index)]
    done = runner.invoke(app, [*args, "--out", str(out), "--per-format", "2", "--threads", "2"])
    assert done.exit_code == 0, done.output
    written = json.loads(out.read_text())
    assert written["role"] == "answerer" and written["template"] == template_digest()
    report = written["fitted_on"]["report"]
    assert report["claim"]["rows"] == 2 and report["multiple_choice"]["rows"] == 2
    model = load_model("embedded")
    assert written["model"] == model.identity
    # the file is one `oner` reads: a fitted format's biases reach its labels' tokens
    posed = Posed("Masks stop the virus.", claim=True)
    biases = label_bias(model, posed, path=out)
    assert bool(biases) == ("claim" in written["biases"])
    missing = runner.invoke(app, [*args[:4], str(tmp_path / "none"), *args[5:], "--out", str(out)])
    assert missing.exit_code != 0 and "claims_train" in missing.output


@pytest.mark.integration
def test_the_agent_file_is_written_beside_its_adapter_and_names_it(tmp_path):
    from ragteam.llm import ModelOptions, load_model
    from ragteam.llm.gguf_files import gguf_fingerprint
    from ragteam.smart.agent import shipped_adapter
    from ragteam.smart.labels import load_calibration
    from ragteam.smart.training.labels import fit_smart_labels

    adapter = tmp_path / "agent.gguf"
    shutil.copyfile(shipped_adapter(), adapter)
    data = tmp_path / "built"
    data.mkdir()
    items, examples = [], []
    for n, (claim, gold) in enumerate(
        [("Oslo is in Norway.", "true"), ("Rome is in Peru.", "false")]
    ):
        posed = Posed(claim, claim=True)
        items.append({"id": f"c{n}", "split": "train", "format": "claim", "posed": posed.text,
                      "labels": posed.labels, "answers": [gold]})  # fmt: skip
        prompt = f"<|Question|>: {posed.text}\n<|Generator|>: "
        examples.append({"id": f"c{n}/g", "role": "generator", "text": prompt + gold,
                         "prompt_chars": len(prompt)})  # fmt: skip
    (data / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    (data / "short.jsonl").write_text("".join(json.dumps(e) + "\n" for e in examples))
    options = ModelOptions(lora=adapter, merge_lora=False, cache=False, n_threads=2)
    seen = []
    model = load_model("embedded", options)
    written = fit_smart_labels(model, adapter, data, 4, 0, lambda n, total: seen.append(n))
    assert written["adapter"] == gguf_fingerprint(adapter)
    assert written["fitted_on"]["claim"]["rows"] == 2 and seen == [1, 2]
    calibration = load_calibration(adapter)
    assert calibration is not None and calibration.biases == written["biases"]
