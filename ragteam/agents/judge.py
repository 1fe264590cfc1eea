"""The support judge: a model asked whether one passage states an answer sentence to its
question (`--support llm`; `--role-model judge=openai:NAME` puts a served model on it). Used by
the support stage as its `llm` layer; a reply that is not the verdict fails that step visibly
and the lexical verdict stands for the pair."""

from __future__ import annotations

from collections.abc import Callable

from ragteam.agents.role import Players, Role, object_of

JUDGE = Role(
    "judge",
    "support_judge",
    object_of(("supported",), supported={"type": "boolean"}),
    16,
    grounded=False,  # its examples are made up: a verdict cannot copy them
    slots=("passage", "question", "answer"),
)
ROLE_NAMES = (JUDGE.name,)
PASSAGE_CHARS = 1500  # a passage beyond this is cut (its beginning kept) to fit the prompt


def judge_with(ctx: Players, question: str) -> Callable[[str, str], bool]:
    """A judge of `question`'s answer sentences: (sentence, passage text) -> whether the passage
    states it. Raises ParseError (a RagteamError; the failed step is in the trace) when the
    model's reply is no verdict after its retry."""

    def judge(sentence: str, passage: str) -> bool:
        reply = JUDGE.call(ctx, passage=passage[:PASSAGE_CHARS], question=question, answer=sentence)
        return bool(reply["supported"])

    return judge
