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
