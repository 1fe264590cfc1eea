"""Conversions in a child process with a time budget per file.

A converter runs third-party parsers (PDFium, python-docx, lxml) over files anyone may drop in
a folder. A file that takes too long, or crashes its parser, must fail alone while the sync
goes on. `Isolated` converts one file at a time in a child process, started on first use and
reused for the next file; a file past its `seconds` has its child killed (the next file gets a
new one) and fails with a reason that names the budget. The child is a fresh interpreter
(`python -m ragteam.documents.isolated`), neither forked (the parent may be a server with
threads, and a fork copies their locks held) nor started by multiprocessing's spawn (which runs
the parent's main script again: a user's script without a `__main__` guard would sync again in
every child). It reads jobs on its stdin and answers on its stdout (multiprocessing's framing);
what a converter prints goes to stderr."""

from __future__ import annotations

import contextlib
import importlib
import os
import subprocess
import sys
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ragteam.documents.base import ConversionFailed, Converted, ConvertSettings

DEFAULT_SECONDS = 300.0  # a file's budget unless --file-seconds says otherwise


@dataclass(frozen=True)
class _Job:
    converter: str  # "module:Class", loaded in the child
    path: str
    settings: ConvertSettings


class TimedOut(ConversionFailed):
    """A file took longer than its budget (its child was stopped)."""


def spec_of(converter: Any) -> str:
    kind = type(converter)
    return f"{kind.__module__}:{kind.__qualname__}"


class Isolated:
    """Converts files in a child process, each within `seconds` (see the module's doc). Use it
    as a context manager, or call `close`."""

    def __init__(self, seconds: float = DEFAULT_SECONDS) -> None:
        if seconds <= 0:
            raise ValueError("a file's time budget must be positive")
        self.seconds = seconds
        self._child: Any = None
        self._pipe: Any = None

    def convert(self, converter: Any, path: Path, settings: ConvertSettings) -> Converted:
        """`converter.convert(path, settings)`, run in the child; a `ConversionFailed` when the
        file takes longer than the budget, the child dies, or the converter raises."""
        job = _Job(spec_of(converter), str(path), settings)
        self._start()
        try:
            self._pipe.send(job)
        except OSError:  # the child died since the last file: a new one
            self._stop()
            self._start()
            self._pipe.send(job)
        if not self._pipe.poll(self.seconds):
            self._stop()
            raise TimedOut(
                f"took more than {self.seconds:g} s to read, so it was stopped "
                "(split the file, or allow more with --file-seconds)"
            )
        try:
            outcome, value = self._pipe.recv()
        except (EOFError, OSError):
            code = self._stop()
            raise ConversionFailed(
                f"the {converter.name} converter crashed on it (exit code {code}); "
                "the file may be damaged"
            ) from None
        if outcome == "failed":
            raise ConversionFailed(value)
        if outcome == "error":
            raise ConversionFailed(f"the {converter.name} converter failed: {value}")
        return value

    def _start(self) -> None:
        if self._child is not None and self._child.poll() is None:
            return
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self._child = subprocess.Popen(
            [sys.executable, "-m", "ragteam.documents.isolated"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self._pipe = _Duplex(
            Connection(os.dup(self._child.stdout.fileno()), writable=False),
            Connection(os.dup(self._child.stdin.fileno()), readable=False),
        )
        self._child.stdout.close()
        self._child.stdin.close()

    def _stop(self) -> int | None:
        child, self._child = self._child, None
        if self._pipe is not None:
            self._pipe.close()
            self._pipe = None
        if child is None:
            return None
        if child.poll() is None:
            child.kill()
        try:
            return child.wait(5)
        except subprocess.TimeoutExpired:
            return None

    def close(self) -> None:
        if self._child is not None and self._child.poll() is None and self._pipe is not None:
            with contextlib.suppress(OSError):
                self._pipe.send(None)  # the child returns when told
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._child.wait(5)
        self._stop()

    def __enter__(self) -> Isolated:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class _Duplex:
    """The child's two pipes as one connection (send, poll, recv, close)."""

    def __init__(self, reading: Connection, writing: Connection) -> None:
        self.reading, self.writing = reading, writing

    def send(self, value: Any) -> None:
        self.writing.send(value)

    def poll(self, seconds: float) -> bool:
        return self.reading.poll(seconds)

    def recv(self) -> Any:
        return self.reading.recv()

    def close(self) -> None:
        self.reading.close()
        self.writing.close()


def _serve() -> None:
    """The child: convert each job read on stdin until told to stop (None) or stdin closes;
    answers go to the original stdout, and fd 1 becomes stderr (what converters print)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops us
    answers = Connection(os.dup(1), readable=False)
    os.dup2(2, 1)
    jobs = Connection(os.dup(0), writable=False)
    while True:
        try:
            job = jobs.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        answers.send(_run(job))


def _run(job: _Job) -> tuple[str, Any]:
    try:
        module, _, name = job.converter.partition(":")
        found: Any = importlib.import_module(module)
        for part in name.split("."):
            found = getattr(found, part)
        converter = found()
        return "ok", converter.convert(Path(job.path), job.settings)
    except ConversionFailed as exc:
        return "failed", str(exc)
    except Exception as exc:  # noqa: BLE001 - any converter's failure is this file's
        return "error", f"{type(exc).__name__}: {exc}"


if __name__ == "__main__":
    _serve()
