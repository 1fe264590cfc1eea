"""Conversations in the library (issue 87): `ragteam.Conversation` keeps the turns and asks a
follow-up as the question it means, with the real span reader over a real index; `ragteam ask
--follow FILE` continues one across runs; a file that is not a conversation is a clear error
and is left as it was."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import ragteam
from ragteam.cli import app
from ragteam.errors import InputError
from ragteam.retrieval import sync_folder
from ragteam.retrieval.index import IndexSettings

SSH = """# ServerAliveInterval

ServerAliveInterval sets a timeout interval in seconds after which, if no data has been
received from the server, ssh sends a message through the encrypted channel to request a
response from the server. The default is 0, indicating that these messages will not be sent.

# Compression

Compression specifies whether to use compression. The argument must be yes or no. The default
is no.
"""


@pytest.fixture(scope="module")
def ssh_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("ssh")
    (root / "docs").mkdir()
    (root / "docs" / "ssh_config.md").write_text(SSH, encoding="utf-8")
    sync_folder(root / "docs", root / "ix", index=IndexSettings(retriever="bm25"))
    return root / "ix"


def test_a_conversation_asks_a_follow_up_as_the_question_it_means(ssh_index, tmp_path):
    talk = ragteam.Conversation()
    first = talk.ask("What does ServerAliveInterval do?", index=ssh_index)
    assert first.question == "What does ServerAliveInterval do?"
    second = talk.ask("What is its default?", index=ssh_index)
    assert second.question != "What is its default?" and "ServerAliveInterval" in second.question
    assert second.text.strip().rstrip(".") == "0", second.text
    assert second.trace.steps[0].meta.get("event") == "follow_up"  # said first, not added after
    assert [t.question for t in talk.turns] == [
        "What does ServerAliveInterval do?",
        "What is its default?",
    ]
    assert talk.turns[1].answered_as == second.question
    fresh = talk.ask("Who wrote the Hevik saga?", index=ssh_index)  # stands alone
    assert fresh.question == "Who wrote the Hevik saga?"
    saved = tmp_path / "talk.json"
    talk.save(saved)
    assert ragteam.Conversation.load(saved).turns == talk.turns


def test_ask_follow_continues_a_conversation_across_runs(ssh_index, tmp_path):
    runner = CliRunner()
    kept = tmp_path / "talk.json"
    base = ["ask", "--index", str(ssh_index), "--follow", str(kept)]
    one = runner.invoke(app, [*base[:1], "What does ServerAliveInterval do?", *base[1:]])
    assert one.exit_code == 0, one.output
    two = runner.invoke(app, [*base[:1], "What is its default?", *base[1:], "--json"])
    assert two.exit_code == 0, two.output
    assert "answered as: What is its default? (following:" in two.stderr
    turns = json.loads(kept.read_text())["turns"]
    assert len(turns) == 2 and "ServerAliveInterval" in turns[1]["answered_as"]
    kept.write_text("{not json")
    broken = runner.invoke(app, [*base[:1], "And compression?", *base[1:]])
    said = " ".join(broken.output.split())  # the console wraps the message at its width
    assert broken.exit_code != 0 and "is not a conversation ragteam saved" in said
    assert kept.read_text() == "{not json"  # left as it was
    with pytest.raises(InputError, match="not a conversation"):
        ragteam.Conversation.load(kept)
