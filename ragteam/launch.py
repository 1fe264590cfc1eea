"""The `ragteam` command's entry point. `ragteam index ...` runs the index commands alone,
without importing the strategies, the reader and the model backends that the other commands
declare their flags from (about a second less for every sync at the command line); every other
command goes through the whole CLI (`ragteam.cli.app`)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["index"]:
        from ragteam.commands.common import log_to_stderr
        from ragteam.commands.index import index_app

        log_to_stderr()
        index_app(args=args[1:], prog_name="ragteam index")
        return
    from ragteam.cli import app

    app(args=args, prog_name="ragteam")
