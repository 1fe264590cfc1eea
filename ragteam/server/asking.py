"""The server's answer requests, made from `ragteam.asking.AskRequest`'s fields (declared there
once): `AskOptions` is the chat completion's `ragteam` extension (the options the chat body does
not say its own way), `Asked` a request as the service answers it (the page's and the API's
body `/v1/answer`, a chat turn, an MCP call), with the question, the index and the
conversation so far. A field's values are named in the schemas where it declares them."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from ragteam.asking import AskRequest, ask_fields, ask_hints


def _fields(where: str) -> dict[str, Any]:
    """pydantic fields for `AskRequest`'s fields offered `where`, with their help."""
    hints = ask_hints()
    made: dict[str, Any] = {}
    for f in ask_fields(where):
        reach = f.metadata["reach"]
        kind = Literal[reach.names()] if reach.names else hints[f.name]  # type: ignore[misc]
        help_ = f.metadata["flag"].help
        # a number is a number: `true` is not a temperature of 1 (strict: no bool, no string)
        strict = {"strict": True} if kind in (int, float) else {}
        if f.default_factory is not dataclasses.MISSING:
            made[f.name] = (
                kind,
                Field(default_factory=f.default_factory, description=help_, **strict),
            )
        else:
            made[f.name] = (kind, Field(default=f.default, description=help_, **strict))
    return made


AskOptions = create_model(  # type: ignore[call-overload]
    "AskOptions",
    __doc__="How to answer, besides what a chat body says its own way (AskRequest's fields).",
    __config__=ConfigDict(extra="forbid"),  # a misspelt option is refused, never ignored
    **_fields("chat"),
)


class Turn(BaseModel):
    """One earlier turn of the page's conversation: what was asked, and the answer it got."""

    question: str = Field(min_length=1, max_length=20_000)
    answer: str = Field(default="", max_length=20_000)


class _Where(BaseModel):
    """What a served request says besides its answer options."""

    model_config = ConfigDict(extra="forbid")  # a misspelt field is a 422 naming it, not ignored
    question: str = Field(min_length=1)
    index: str | None = None
    # the conversation so far, oldest first: a follow-up that leans on it is made to stand alone
    earlier: list[Turn] = Field(default_factory=list, max_length=50)

    def request(self) -> AskRequest:
        """The answer options as the library takes them (an invalid one is an InputError)."""
        return AskRequest(**{f.name: getattr(self, f.name) for f in ask_fields("served")})


Asked = create_model(  # type: ignore[call-overload]
    "Asked",
    __base__=_Where,
    __doc__="An answer request as the service answers it (the HTTP body, a chat turn, MCP).",
    **_fields("served"),
)
