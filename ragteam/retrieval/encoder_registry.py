"""Encoders by backend name: a registry the index builder and loader look up. Built in: `torch`
(MiniLM in plain torch, `ragteam.minilm.bert`), `onnx` and `onnx-int8` (ONNX Runtime), `server`
(a served /v1/embeddings model). Another backend is one `register_encoder(name, factory)` call,
or an installed package's entry point in the `ragteam.encoders` group (a factory `EncoderSpec ->
Encoder`), which `--encoder NAME` then names like a built-in one."""

from __future__ import annotations

from collections.abc import Callable

from ragteam.common.once import loaded_once
from ragteam.errors import IndexUnusable
from ragteam.plugins import Registry
from ragteam.retrieval.encoders import Encoder, EncoderSpec, TorchEncoder

Factory = Callable[[EncoderSpec], Encoder]


def _torch(spec: EncoderSpec) -> Encoder:
    return TorchEncoder()


@loaded_once(maxsize=2)
def _onnx(int8: bool) -> Encoder:
    from ragteam.retrieval.onnx_encoder import OnnxEncoder

    return OnnxEncoder(int8=int8)


def _server(spec: EncoderSpec) -> Encoder:
    from ragteam.retrieval.embed_server import ServerEncoder

    return ServerEncoder(spec)


ENCODERS = Registry(
    "encoder backend",
    "ragteam.encoders",
    {
        "torch": _torch,
        "onnx": lambda spec: _onnx(False),
        "onnx-int8": lambda spec: _onnx(True),
        "server": _server,
    },
)


def register_encoder(backend: str, factory: Factory) -> None:
    """Make `backend` buildable by `make_encoder` (and loadable from a manifest)."""
    ENCODERS.register(backend, factory)


def encoder_names() -> list[str]:
    """Every backend `--encoder` may name: built in, registered, installed."""
    return sorted(set(ENCODERS.names()) - {"server"})


def parse_encoder(text: str, base_url: str = "", batch: int = 64) -> EncoderSpec:
    """`--encoder`: a backend name (built in, registered or installed) or `openai:MODEL`."""
    if text != "server" and text in encoder_names():
        return EncoderSpec(text)
    return EncoderSpec.parse(text, base_url, batch, known=encoder_names())


def make_encoder(spec: EncoderSpec) -> Encoder:
    if spec.backend not in ENCODERS:
        raise IndexUnusable(
            f"unknown encoder backend '{spec.backend}'; known: {', '.join(encoder_names())} "
            "(an index built with a plugin's encoder needs that plugin installed)"
        )
    factory: Factory = ENCODERS.load(spec.backend)
    return factory(spec)
