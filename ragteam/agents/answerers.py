"""The plain-text roles of the baselines and IRCoT: an answerer (with passages, or from the
model's own knowledge) and IRCoT's one-sentence reasoner."""

from __future__ import annotations

from dataclasses import replace

from ragteam.agents.role import Role
from ragteam.agents.views import after, text_answer

STOP = ("\n\n", "\nQuestion:", "<|im_end|>")

# reads the answer off numbered passages; a reply copying the worked example is retried without it
ANSWERER = Role(
    "answerer", "oner", max_tokens=48, stop=STOP, view=text_answer, slots=("passages", "question")
)
# NoR: the same role answering from the model's own knowledge
ANSWERER_DIRECT = replace(ANSWERER, prompt="nor", grounded=False, slots=("question",))
# IRCoT: the next reasoning sentence over the passages so far
REASONER = Role(
    "reasoner",
    "ircot",
    max_tokens=48,
    grounded=False,
    stop=STOP,
    view=after("so the answer is"),  # the sentence that ends the reasoning holds the answer
    slots=("passages", "question", "reasoning"),
)
