"""A conversation with one's documents: its turns, and each follow-up asked as the question it
means. The page, `/v1/answer`, chat, MCP and `ragteam ask --follow` all go through it."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ragteam.asking.api import MAX_QUESTION_CHARS, answer, check_question
from ragteam.errors import InputError
from ragteam.followup import standalone
from ragteam.trace import Step
from ragteam.types import Answer

FORMAT = "ragteam-conversation/1"


@dataclass(frozen=True)
class Turn:
    """One turn: the question as it was asked, as it was answered (the same when it stood
    alone), and the answer's words."""

    question: str
    answer: str = ""
    answered_as: str = ""


@dataclass
class Conversation:
    """The turns so far, oldest first. `ask` makes a follow-up stand alone against them
    (`ragteam.followup`: a model fitted on people's rewrites decides whether it leans on the
    turns before it and which of their words it goes on with; earlier answers are never search
    words), answers it, and keeps the turn. `limit`: the longest question a rewrite may make
    (a longer one is asked as it was given)."""

    turns: list[Turn] = field(default_factory=list)
    limit: int = MAX_QUESTION_CHARS

    @classmethod
    def of_messages(cls, messages: list[tuple[str, str]], limit: int) -> Conversation:
        """The turns of chat messages as (role, text), oldest first: a user message opens a
        turn, an assistant message answers the turn before it."""
        turns: list[Turn] = []
        for role, text in messages:
            if role == "user":
                turns.append(Turn(text))
            elif role == "assistant" and turns and not turns[-1].answer:
                turns[-1] = Turn(turns[-1].question, text)
        return cls(turns, limit)

    def meant(self, asked: str) -> tuple[str, str]:
        """(the question to search and answer, the words it goes on with: "" when it stands
        alone)."""
        if not self.turns:  # a first question stands alone: the model is not even read
            return asked, ""
        earlier: list[tuple[str, str]] = []
        for turn in self.turns:
            earlier += [("user", turn.question), ("assistant", turn.answer)]
        return standalone(asked, earlier, self.limit)

    def ask(self, question: str, *args: Any, **kwargs: Any) -> Answer:
        """`ragteam.answer` of the question as meant (its arguments after the question as
        `answer` takes them); the turn is kept, and the trace says first how it was
        rewritten (said to `on_step` before the work begins)."""
        asked = check_question(question)
        meant, follows = self.meant(asked)
        before = list(kwargs.pop("before", ()))
        if follows:
            rewrite = follow_up_step(asked, meant)
            if kwargs.get("on_step") is not None:
                kwargs["on_step"](rewrite)
            before.append(rewrite)
        result = answer(meant, *args, before=before, **kwargs)
        self.turns.append(Turn(asked, result.text, meant))
        return result

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "turns": [asdict(t) for t in self.turns]}

    def save(self, path: Path) -> None:
        """Written whole or not at all (a kill mid-write leaves the file as it was)."""
        from ragteam.common.atomic import write_json

        write_json(path, self.to_dict())

    @classmethod
    def load(cls, path: Path) -> Conversation:
        """The conversation saved at `path`; a new one when there is no such file."""
        if not path.exists():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("format") != FORMAT:
                raise ValueError(f"not a {FORMAT} file")
            return cls([Turn(**t) for t in data["turns"]])
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InputError(
                f"{path} is not a conversation ragteam saved ({exc}): name another file, or "
                "remove it to start a new conversation"
            ) from exc


def follow_up_step(asked: str, meant: str) -> Step:
    """The trace's note of how a follow-up was made to stand alone."""
    said = (
        f'"{" ".join(asked.split())}" leans on the question before it: searched and answered '
        f'as "{meant}" (earlier replies are not searched)'
    )
    return Step("note", "follow-up", None, said, meta={"event": "follow_up"})
