"""The span reader in ONNX Runtime (issue 89): exported from the loaded weights into the cache
folder, it reads as the PyTorch network does (the same spans, scores within 1e-4); the trace
says which runtime read; an unknown runtime asked for is a clear error."""

from __future__ import annotations

import pytest

from ragteam.errors import InputError
from ragteam.types import Passage

pytest.importorskip("onnxruntime")

PASSAGES = [
    Passage("a", "Harbour", "The harbour master is Jonas Quell, appointed in 1902 by the council."),
    Passage("b", "Bridge", "The Tarrin Bridge was designed by Mira Okafor and opened in 1871."),
    Passage("c", "Tides", "Spring tides reach four metres in March. Logging cannot be turned off."),
]


def test_onnx_reads_as_torch_does(monkeypatch, tmp_path):
    from ragteam.reader.read import load_reader

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    readings = {}
    for runtime in ("torch", "onnx"):
        monkeypatch.setenv("RAGTEAM_READER_RUNTIME", runtime)
        reader = load_reader()
        assert reader.runtime == runtime
        readings[runtime] = [
            reader.read(q, PASSAGES)
            for q in ("Who designed the Tarrin Bridge?", "Can logging be turned off?")
        ]
    assert list((tmp_path / "ragteam" / "readers").glob("reader-*.onnx"))  # exported once
    for torch_read, onnx_read in zip(readings["torch"], readings["onnx"], strict=True):
        assert [(s.passage_id, s.start, s.end, s.kind) for s in torch_read.spans] == [
            (s.passage_id, s.start, s.end, s.kind) for s in onnx_read.spans
        ]
        for a, b in zip(torch_read.spans, onnx_read.spans, strict=True):
            assert abs(a.score - b.score) < 1e-4
    assert readings["onnx"][0].best is not None and readings["onnx"][0].best.text == "Mira Okafor"


def test_an_unknown_runtime_is_a_clear_error(monkeypatch):
    from ragteam.reader.onnx import wanted_runtime

    monkeypatch.setenv("RAGTEAM_READER_RUNTIME", "tpu")
    with pytest.raises(InputError, match="use one of torch, onnx"):
        wanted_runtime()
