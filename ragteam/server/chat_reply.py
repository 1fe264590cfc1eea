"""How a chat reply is written: sent as the answer grows while it only extends what was sent
(a retry's other answer comes at the end, after "Revised answer: "), cut to the client's
`max_tokens` with its sources whole, and what the trace says of the conversation and the
writing settings."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragteam.server.chat_request import ChatAsked
from ragteam.types import Answer

SOURCES = "\n\nSources:\n"  # the block of cited places after the answer


REVISED = "\n\nRevised answer: "


class Written:
    """What of the answer a chat client has been sent. A chat client only appends, so text is
    sent while each new version of the answer extends what was sent; when a later call writes
    another answer (a retry), nothing more is sent until the end, which then gives the checked
    answer in full after `REVISED`. `hold`: send nothing before the answer is checked (a client
    that asked to withhold unsupported answers must never see one)."""

    def __init__(self, hold: bool = False, limit: int | None = None) -> None:
        self.sent, self.stuck, self.limit, self.cut = "", hold, limit, False

    def add(self, answer: str | None) -> str:
        """The new text to send for the answer so far (None: a call that is not the answer)."""
        if answer is None or self.stuck:
            return ""
        answer = cut_reply(answer, self.limit)[0]
        if answer == self.sent:
            return ""
        if not answer.startswith(self.sent):
            self.stuck = True
            return ""
        delta, self.sent = answer[len(self.sent) :], answer
        return delta

    def finish(self, final: str) -> str:
        """The rest of the reply, once the answer is checked and formatted (`final`), cut to
        the client's limit (`cut` says so)."""
        final, self.cut = cut_reply(final, self.limit)
        if final.startswith(self.sent):
            return final[len(self.sent) :]
        return f"{REVISED}{final}"


def cut_reply(text: str, limit: int | None) -> tuple[str, bool]:
    """`text` cut to about `limit` tokens, and whether it was cut. A word counts 4/3 tokens
    (the served model's tokenizer is not known here), so the cut falls between words. The
    limit is the answer's: its sources block still follows whole (a place is never cut, and an
    answer cut short still says where it came from)."""
    if limit is None:
        return text, False
    body, block, sources = text.partition(SOURCES)
    words = max(1, limit * 3 // 4)
    ends = [m.end() for m in re.finditer(r"\S+", body)]
    if len(ends) <= words:
        return text, False
    return body[: ends[words - 1]] + block + sources, True


@dataclass(frozen=True)
class Reply:
    """How the client asked the reply to be written, and what the trace says was done."""

    talk: ChatAsked
    limit: int | None = None
    temperature: float | None = None

    def notes(self, answer: Answer, cut: bool) -> list[str]:
        """What the reply says of how the conversation and the writing settings were used:
        the chat's own words beside the answer (`ragteam.notes`), not added to the answer's
        trace (a finished answer is not edited)."""
        said = []
        if self.talk.follows:
            said.append(
                f'a follow-up: "{self.talk.asked}" was searched for with the earlier question '
                f'"{self.talk.follows}" (earlier replies are not searched)'
            )
        if self.talk.instructions and "instructions" not in answer.applied:
            said.append(
                f'system message received ("{self.talk.instructions[:200]}"): not applied; '
                f"no role of `{answer.strategy}` that took part writes its answer from "
                "instructions (`read` answers with a passage's words; the trained SMART agent "
                "writes in the form it was trained on)"
            )
        if self.temperature not in (None, 0, 0.0) and "temperature" not in answer.applied:
            said.append(
                f"temperature {self.temperature} asked: not used; no role of "
                f"`{answer.strategy}` that took part samples its answer (`read` answers with a "
                "passage's words; the trained SMART agent decodes greedily)"
            )
        if cut:
            said.append(f"reply cut to about {self.limit} tokens, as asked")
        return said
