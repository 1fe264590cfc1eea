"""The settings of `train verdict`, apart from the code that uses them: the command line reads
their flags from here."""

from __future__ import annotations

from dataclasses import dataclass

from ragteam.settings import flag


@dataclass(frozen=True)
class VerdictSettings:
    """Fitting the verdicts (`train verdict`); the `flag`ged ones are its flags."""

    claims: int = flag(3000, "training claims read (a seeded sample)", min=50)
    choices: int = flag(2000, "multiple-choice training rows read (a seeded sample)", min=50)
    k: int = flag(5, "passages retrieved per row, as an answer retrieves them", min=1, max=50)
    held_share: float = 0.2  # rows (by id hash) that choose the fit and are reported
    seed: int = flag(7)
