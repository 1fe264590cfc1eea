"""The rules that weigh a question's words (a key line, a heading question's passage, a table's
row, a stated default) choose alike whatever order Python's string hashing gives a set: a tie
between two lines holding the same words is a tie under every hash seed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

_PROBE = r"""
import json, random
from ragteam.locator import Locator
from ragteam.reader.headings import by_content
from ragteam.reader.view import key_line
from ragteam.types import Passage

words = ["instaweb", "server", "web", "default", "git", "httpd", "browser", "port", "local"]
question = " ".join(words) + "?"
rnd = random.Random(7)
lines, ordered = [], []
for trial in range(200):
    said = rnd.sample(words, 5)
    filler = [" ".join(rnd.sample(words, 2)) + " other" for _ in range(4)]
    text = "\n".join([" ".join(said), *filler, " ".join(reversed(said))])
    lines.append(key_line(text, question) is None)
    passages = [Passage(f"p{n}", "", t, locator=Locator("a.md")) for n, t in
                enumerate([" ".join(said), filler[0], " ".join(reversed(said))])]
    ordered.append([p.id for p in by_content(question, passages)])
print(json.dumps([lines, ordered]))
"""


def test_the_word_weighing_rules_choose_alike_under_any_hash_seed():
    seen = []
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True
        )
        seen.append(json.loads(done.stdout))
    assert seen[0] == seen[1] == seen[2]
    lines, ordered = seen[0]
    assert all(lines)  # each text's two lines of the same words tie: no key line
    assert all(o[:2] == ["p0", "p2"] for o in ordered)  # the tie keeps the passages' order


def test_a_word_s_weight_is_its_rarity_among_the_sets():
    import math

    from ragteam.common.text import rarity, weighed

    held = [{"easter", "egg"}, {"egg"}, {"egg", "help"}]
    assert rarity(held) == {"egg": math.log(2), "easter": math.log(4), "help": math.log(4)}
    assert rarity(held, everywhere=False) == {"easter": math.log(4), "help": math.log(4)}
    assert rarity([]) == {}
    weight = rarity(held)
    assert weighed({"easter", "egg", "unknown"}, weight) == math.log(4) + math.log(2)
