"""`python -m ragteam ...`: the same as the `ragteam` command."""

from ragteam.cli import app

app()
