"""A follow-up question made to stand alone, for search and for the team: the page's
conversation turns and a chat's messages go through this one rule.

A question leans on the one before when it opens with a connective or names its subject by a
pronoun ("And where do these come from?", "What about its default?"). Then the conversation's
subject is carried after it: the question that began the chain of follow-ups it ends (the
latest earlier question that does not itself open with a connective, whatever pronouns it
holds: "Which value installs a package even if it is a downgrade?" names its subject), with the
latest answer (that reply's first paragraph without `[n]` markers): never a whole earlier
reply, whose sources and warnings would become search words. A chain of follow-ups so keeps
its first question's subject. A rule, not a model step: it is cheap and predictable (a model step
has not been measured against it)."""

from __future__ import annotations

import re

LEANS = re.compile(
    r"^\s*(and|but|also|so|then|what about|how about)\b"
    r"|\b(it|its|they|them|their|these|those|this|that|he|she|him|her|his|there)\b",
    re.IGNORECASE,
)
OPENS = re.compile(r"^\s*(and|but|also|so|then|what about|how about)\b", re.IGNORECASE)
ANSWER_CHARS = 300  # of an earlier answer carried with its question


def answer_only(reply: str) -> str:
    """A reply's answer: its first paragraph, without `[n]` markers, at most ANSWER_CHARS."""
    first = reply.strip().split("\n\n", 1)[0]
    return " ".join(re.sub(r"\[\d+\]", "", first).split())[:ANSWER_CHARS]


def standalone(asked: str, earlier: list[tuple[str, str]], limit: int) -> tuple[str, str]:
    """(the question to answer, what it follows: "" when it stands alone). `earlier` holds the
    conversation's turns before it, oldest first, as (role, text) with role "user" or
    "assistant"; a question longer than `limit` with what it follows stands alone (a question
    that stands alone comes back as it was given)."""
    follows = ""
    asked_at = [n for n, (role, text) in enumerate(earlier) if role == "user" and text.strip()]
    if LEANS.search(asked) and asked_at:
        root = asked_at[-1]
        for n in reversed(asked_at):  # back to the question that began the chain
            root = n
            if not OPENS.search(earlier[n][1]):
                break
        said = [answer_only(t) for r, t in earlier[asked_at[-1] + 1 :] if r == "assistant"]
        follows = " ".join([" ".join(earlier[root][1].split()), *said[-1:]]).strip()
    if not follows:
        return asked, ""
    question = f"{' '.join(asked.split())} (following: {follows})"
    if len(question) > limit:  # the earlier question gives way first
        return asked, ""
    return question, follows
