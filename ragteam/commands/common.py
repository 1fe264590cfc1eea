"""What every `ragteam` sub-command shares: consoles, error handling, option parsing."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress, TaskID

from ragteam.errors import RagteamError, StorageError

out = Console()
err = Console(stderr=True)


def shown(text: str) -> str:
    """`text` safe to print on a terminal: rich markup escaped, and control characters (an
    escape sequence or a newline in a file name) written as visible escapes (`\\x1b`, `\\n`)."""
    from rich.markup import escape

    from ragteam.common.text import visible

    return escape(visible(text))


@contextlib.contextmanager
def friendly_errors() -> Iterator[None]:
    try:
        yield
    except RagteamError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        raise typer.Exit(2) from exc
    except OSError as exc:  # a write or read the library did not expect to fail: no traceback
        said = StorageError.writing(exc.filename or "a file", exc, verb="read or write")
        err.print(f"[bold red]error:[/] {said}", highlight=False)
        raise typer.Exit(2) from exc


ToolsOpt = Annotated[
    list[str],
    typer.Option("--tools", help="a tool as module:function (typed, documented), repeatable"),
]
McpOpt = Annotated[
    list[str],
    typer.Option("--mcp", help='an MCP server over stdio, e.g. --mcp "python server.py"'),
]


@contextlib.contextmanager
def user_tools(specs: list[str], servers: list[str], timeout: float = 30.0) -> Iterator[tuple]:
    """The tools named by --tools and those of the --mcp servers (stopped on exit)."""
    from ragteam.tools import import_tool, plugin_tools
    from ragteam.tools.mcp import MCPServer

    with contextlib.ExitStack() as stack:
        found = [*plugin_tools(), *(import_tool(spec) for spec in specs)]
        for command in servers:
            found += stack.enter_context(MCPServer(command, timeout=timeout)).tools
        yield tuple(found)


class LoggedProgress(Progress):
    """A rich progress bar that, when stderr is not a terminal (nohup, CI, a job scheduler),
    prints a plain line every `interval` seconds instead: done/total, the task's fields,
    elapsed time and an estimate of what is left (and no bar: rich would print its last frame
    at the end)."""

    def __init__(self, *columns: Any, label: str, interval: float = 30.0) -> None:
        super().__init__(*columns, console=err, disable=not err.is_terminal)
        self.label = label
        self.interval = interval
        self._logged = 0.0
        self._finished: set[TaskID] = set()

    def update(self, task_id: TaskID, **kwargs: Any) -> None:  # type: ignore[override]
        super().update(task_id, **kwargs)
        self._log(task_id)

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        super().advance(task_id, advance)
        self._log(task_id)

    def _log(self, task_id: TaskID) -> None:
        if self.console.is_terminal or task_id in self._finished:
            return
        task = self._tasks[task_id]
        done = task.total is not None and task.completed >= task.total
        now = time.monotonic()
        if not done and now - self._logged < self.interval:
            return
        self._logged = now
        if done:
            self._finished.add(task_id)
        line = progress_line(
            task.completed, task.total, task.elapsed, task.time_remaining, task.fields
        )
        said = f"{self.label}: {task.description} " if task.description else f"{self.label}: "
        self.console.print(
            said + line,
            highlight=False,
            markup=False,
            soft_wrap=True,
        )


def progress_line(
    done: float,
    total: float | None,
    elapsed: float | None,
    left: float | None,
    fields: dict[str, Any],
) -> str:
    """`1/6 (17%) · f1 0.059 · 8.4 s/q · 8 s, about 42 s left`: numbers for a person, each
    field by its name (`spq` is seconds per question)."""
    parts = [f"{done:g}/{total:g} ({100 * done / total:.0f}%)" if total else f"{done:g}"]
    for name, value in fields.items():
        if value in ("", None):
            continue
        if name == "spq":
            parts.append(f"{value:.1f} s/q")
        elif isinstance(value, float):
            parts.append(f"{name} {value:.3f}")
        elif name == "info":
            parts.append(str(value))
        else:
            parts.append(f"{name} {value}")
    finished = total is not None and done >= total
    timing = f"{elapsed or 0:.0f} s"
    if left is not None and not finished:
        timing += f", about {left:.0f} s left"
    return " · ".join([*parts, timing])


@contextlib.contextmanager
def live_answer(label: str) -> Iterator[tuple[Any, Any]]:
    """On a terminal, one live line on stderr while an answer is worked out (the step under way,
    the tokens of the reply being written) and the answer as it is written; it disappears when
    the answer is printed. Off a terminal: nothing (`(None, None)`), stdout stays the answer."""
    if not err.is_terminal:
        yield None, None
        return
    from rich.live import Live
    from rich.text import Text

    from ragteam.commands.render import plural

    shown = {"line": f"{label}: starting", "answer": ""}

    def view() -> Text:
        text = Text(shown["line"], style="dim")
        if shown["answer"]:
            text.append("\n" + shown["answer"])
        return text

    with Live(view(), console=err, transient=True, refresh_per_second=12) as live:

        def on_step(step: Any) -> None:
            shown["line"] = f"{label}: {step.kind} · {step.role} done ({step.seconds:.1f} s)"
            live.update(view())

        def on_writing(part: Any) -> None:
            shown["line"] = f"{label}: {part.role} is writing · {plural(part.tokens, 'token')}"
            if part.answer is not None:
                shown["answer"] = part.answer
            live.update(view())

        yield on_step, on_writing


def log_to_stderr() -> None:
    """ragteam's own warnings (a server retried, ...) go to stderr; other libraries stay quiet."""
    logger = logging.getLogger("ragteam")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("ragteam: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
