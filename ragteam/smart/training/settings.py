"""The settings of `train build` and `train fit`, apart from the code that uses them: the
command line reads their flags from here (`ragteam.settings.flag`) without loading torch or an
index."""

from __future__ import annotations

from dataclasses import dataclass

from ragteam.errors import InputError
from ragteam.settings import flag
from ragteam.smart.training import LORA_TARGETS

STAGES = ("short", "long")
SHORT_ROLES = ("reconstructor", "locator", "generator")


@dataclass(frozen=True)
class BuildSettings:
    """How trajectories are built; the `flag`ged ones are `train build`'s flags."""

    k: int = flag(3, "passages per intent", min=1, max=20)  # as the `smart` strategy's k
    max_intents: int = flag(3, min=1, max=6)
    # trajectory length bound: passages past this are dropped
    max_passages: int = flag(6, "passages per trajectory", min=1, max=20)
    seed: int = flag(0)
    validation_share: float = 0.05
    # the posed question is searched first (as `smart` trajectory mode does, with_question),
    # and the <retrieval> block is filled up to `max_passages` with its further hits (as
    # inference does only with `--opt fill_block=true`: docs/benchmarks.md section 19a)
    question_first: bool = flag(
        False,
        "search the posed question first and fill the retrieval block up to --max-passages "
        "with its further hits (as `smart` does at inference)",
    )
    # each <retrieval> block in a seeded random order (training/reorder.py): retrieval order
    # puts a gold paragraph first so often that a locator learns the position, not the text
    shuffle_passages: bool = flag(
        False,
        "each retrieval block in a seeded random order, so that the locator cannot learn that "
        "the first passage is the relevant one",
    )


def _stages(text: str) -> tuple[str, ...]:
    if text == "both":
        return STAGES
    if text not in STAGES:
        raise InputError(f"--stage must be short, long or both, not '{text}'")
    return (text,)


@dataclass(frozen=True)
class FitSettings:
    """A training run's settings; the `flag`ged ones are `train fit`'s flags."""

    base: str = flag("embedded", "embedded | PATH.gguf | HF folder")
    stages: tuple[str, ...] = flag(
        STAGES,
        "short | long | both",
        name="--stage",
        parse=_stages,
        show=lambda s: "both" if s == STAGES else s[0],
    )
    # short stage; a fraction trains on a seeded share of the examples
    epochs: float = flag(1.0, "short-stage epochs", min=0.01, max=20)
    long_epochs: float = flag(1.0, "long-stage epochs", min=0.01, max=20)
    short_roles: tuple[str, ...] = flag(SHORT_ROLES, "roles of the short stage, comma-separated")
    lr: float = flag(1e-4, min=1e-7, max=1e-2)
    warmup: float = 0.03
    weight_decay: float = 0.0
    batch_tokens: int = flag(2048, "padded tokens per optimizer step", min=128, max=65536)
    max_length: int = flag(1536, "longer examples are left out (counted)", min=64, max=32768)
    seed: int = flag(0)
    threads: int = flag(0, "torch threads (0: default)", min=0)
    checkpoint_every: int = 25
    max_steps: int = flag(0, "stop after N steps (0: all)", min=0)
    # 0: full fine-tuning; > 0: a LoRA adapter of this rank (the flag's rank applies with --lora)
    lora_rank: int = flag(0, "LoRA rank (with --lora)", min=1, max=256, cli_default=16)
    lora_alpha: float = flag(32.0, "LoRA alpha (scale alpha/rank)", min=0.0)
    lora_dropout: float = flag(0.05, min=0.0, max=0.9)
    lora_targets: tuple[str, ...] = flag(
        LORA_TARGETS, "layers to adapt, comma-separated (default: every linear layer)"
    )
    # continue training this adapter folder (an earlier run's adapter/)
    lora_init: str = flag(
        "", "continue an adapter: a run's adapter/ folder or a .gguf adapter (with --lora)"
    )
    # weight of each locator judgement's deciding token ("Relevant"/"Irrelevant") in the loss
    decision_weight: float = flag(
        1.0,
        "loss weight of the token where each locator judgement is decided "
        "(Relevant/Irrelevant); 1: as any token",
        min=0.0,
    )

    def __post_init__(self) -> None:
        unknown = sorted(set(self.short_roles) - set(SHORT_ROLES))
        if unknown:
            raise InputError(
                f"--short-roles {','.join(unknown)}: not a SMART role; "
                f"roles: {', '.join(SHORT_ROLES)}"
            )
