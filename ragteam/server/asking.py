"""What an answer request may ask, declared once for the server: the page's and the API's body
(`/v1/answer`), the chat completion's `ragteam` extension and the service all read
`AskOptions`; `Asked` is a request as the service answers it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ragteam.strategies import DEFAULT_STRATEGY
from ragteam.support.layers import layer_names
from ragteam.types import DEFAULT_SUPPORT_LAYER
from ragteam.verdict.stage import MODES

# every layer `--support` takes, named in the schemas (a plugin layer installed later is listed
# from the next start; the request is checked against the registry either way)
SupportName = Literal[tuple(layer_names())]  # type: ignore[valid-type]
VerdictsName = Literal[MODES]  # type: ignore[valid-type]


class AskOptions(BaseModel):
    """How to answer, besides the question: the strategy's options, a multiple-choice or
    true/false form, the support check, and who decides a claim's verdict."""

    options: dict[str, Any] = Field(default_factory=dict)
    choices: dict[str, str] | None = None
    claim: bool = False
    support: SupportName = DEFAULT_SUPPORT_LAYER
    # "not found in your documents" when no passage supports the answer (a streamed chat reply
    # then waits for the check)
    abstain: bool = False
    # who decides a claim: the verdicts fitted over the passages read, or the strategy itself
    verdicts: VerdictsName = "fitted"


class Turn(BaseModel):
    """One earlier turn of the page's conversation: what was asked, and the answer it got."""

    question: str = Field(min_length=1, max_length=20_000)
    answer: str = Field(default="", max_length=20_000)


class Asked(AskOptions):
    """An answer request as the service answers it (the HTTP body, a chat turn, an MCP call)."""

    question: str
    index: str | None = None
    strategy: str = DEFAULT_STRATEGY
    # the conversation so far, oldest first: a follow-up that leans on it is made to stand alone
    earlier: list[Turn] = Field(default_factory=list)
    instructions: str = ""  # the asker's own (a chat's system message)
    temperature: float = 0.0  # the asker's, for the roles that write the answer

    def earlier_turns(self) -> list[tuple[str, str]]:
        """The earlier turns as (role, text), oldest first."""
        turns: list[tuple[str, str]] = []
        for turn in self.earlier:
            turns += [("user", turn.question), ("assistant", turn.answer)]
        return turns
