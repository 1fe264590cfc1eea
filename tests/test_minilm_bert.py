"""The embedding model in plain torch (`ragteam.minilm.bert`) against sentence-transformers."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from ragteam.retrieval.encoders import embedding_model_dir, max_seq_length


def test_the_plain_torch_minilm_embeds_as_sentence_transformers_does():
    """The `torch` encoder's vectors are the reference all-MiniLM-L6-v2's (BERT, mean pooling,
    unit length) to float noise: indexes and caches made with sentence-transformers stay
    valid. Empty, one-letter, over-long (truncated at 256 tokens) and non-ASCII texts too."""
    from sentence_transformers import SentenceTransformer

    from ragteam.minilm.bert import MiniLM

    folder = embedding_model_dir()
    texts = [
        "The Wrenhold Lighthouse stands on the northern cape of Quillan.",
        "Emrik Tollan was an engineer born in Hevik in 1752.",
        "",
        "a",
        "word " * 700,
        "Ünïcödé, ½ and 🙂 in one line",
        "ServerAliveInterval sets a timeout interval in seconds (default 0).",
    ]
    reference = SentenceTransformer(str(folder), device="cpu").encode(
        texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    ours = MiniLM(folder, max_seq_length(folder)).embed(texts)
    assert ours.shape == reference.shape == (len(texts), 384)
    assert float(np.abs(ours - reference).max()) < 1e-5


def test_the_torch_encoder_loads_without_sentence_transformers():
    """Loading the encoder to embed one changed passage imported sentence-transformers (and
    transformers): most of a one-file hybrid sync's 8.4 s at 78k passages."""
    code = (
        "import sys\nfrom ragteam.retrieval.encoder_registry import make_encoder\n"
        "from ragteam.retrieval.encoders import EncoderSpec\n"
        "vector = make_encoder(EncoderSpec()).encode(['one changed passage'])\n"
        "assert vector.shape == (1, 384)\n"
        "print(sorted(m for m in ('sentence_transformers', 'transformers') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_plain_torch_bert_reads_as_transformers_bert_does():
    """The span reader's and the cross-encoders' encoder (`Bert`) gives transformers' BertModel's
    last hidden states to float noise, padded batches and token types included, has its
    tensors' names (weights files address them), and trains (gradients reach the layers)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from ragteam.minilm.bert import Bert

    folder = embedding_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    batch = tokenizer(
        ["Who built the Wrenhold Lighthouse?", "a"],
        ["Emrik Tollan built it in 1871 from local granite. " * 20, "Ünïcödé ½"],
        truncation="only_second",
        max_length=128,
        padding=True,
        return_tensors="pt",
    )
    reference, ours = AutoModel.from_pretrained(str(folder)).eval(), Bert.installed(folder)
    with torch.inference_mode():
        expected = reference(**batch).last_hidden_state
        got = ours(**batch).last_hidden_state
    real = batch["attention_mask"][..., None].bool()
    assert got.shape == expected.shape == (2, 128, 384)
    assert float(((got - expected).abs() * real).max()) < 1e-4
    assert set(ours.state_dict()) == {
        k for k in reference.state_dict() if not k.startswith("pooler.")
    }
    ours.train()
    ours(**batch).last_hidden_state.sum().backward()
    assert float(ours.encoder.layer[0].attention.self.query.weight.grad.abs().sum()) > 0


def test_the_span_reader_loads_without_transformers_bert():
    """A server's reader loaded transformers' BERT modelling code: seconds of its warm-up."""
    code = (
        "import sys\nfrom ragteam.reader import load_reader\nload_reader()\n"
        "print('transformers.models.bert.modeling_bert' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
