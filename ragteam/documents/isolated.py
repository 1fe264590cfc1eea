"""Conversions in a child process with a time and memory budget per file.

A converter runs third-party parsers (PDFium, python-docx, lxml) over files anyone may drop in
a folder. A file that takes too long, or crashes its parser, must fail alone while the sync
goes on. `Isolated` converts one file at a time in a child process, started on first use and
reused for the next file; a file past its `seconds` has its child killed (the next file gets a
new one) and fails with a reason that names the budget. The child's address space is limited
to `memory_mb` (RLIMIT_AS, where the system has it): a small file that inflates to gigabytes
(a PDF's content stream, a zipped Office file) fails with a MemoryError instead of taking the
machine's memory. The child is a fresh interpreter
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
# the child's address space unless --file-memory-mb says otherwise: the converters read the
# benchmark's documents in about 100 MB (VmPeak), and a hostile PDF took 5.5 GB before this
DEFAULT_MEMORY_MB = 4096


@dataclass(frozen=True)
class _Job:
    function: str  # "module:name", looked up in the child
    args: tuple[Any, ...]


class OverBudget(ConversionFailed):
    """A file needed more time or memory than its budget allows (it is tried again only under
    a larger one)."""


class TimedOut(OverBudget):
    """A file took longer than its budget (its child was stopped)."""


class OutOfMemory(OverBudget):
    """A file needed more memory than the child may have."""


class Crashed(OverBudget):
    """The child died reading a file (a native library aborting when an allocation past the
    memory limit fails, or a damaged file): recorded with the budgets it ran under, so the
    same bytes are not read again at full cost on every sync, only under larger budgets."""


def spec_of(converter: Any) -> str:
    kind = type(converter)
    return f"{kind.__module__}:{kind.__qualname__}"


class Isolated:
    """Converts files in a child process, each within `seconds` and `memory_mb` (see the
    module's doc). Use it as a context manager, or call `close`."""

    def __init__(
        self, seconds: float = DEFAULT_SECONDS, memory_mb: int = DEFAULT_MEMORY_MB
    ) -> None:
        if seconds <= 0 or memory_mb <= 0:
            raise ValueError("a file's time and memory budgets must be positive")
        self.seconds, self.memory_mb = seconds, memory_mb
        self._child: Any = None
        self._pipe: Any = None

    def convert(self, converter: Any, path: Path, settings: ConvertSettings) -> Converted:
        """`converter.convert(path, settings)`, run in the child; a `ConversionFailed` when the
        file takes longer than the budget, the child dies, or the converter raises."""
        args = (spec_of(converter), str(path), settings)
        return self.call(f"{__name__}:convert_file", args, f"the {converter.name} converter")

    def call(self, function: str, args: tuple[Any, ...], what: str) -> Any:
        """`function(*args)` ("module:name") run in the child within the budgets; `what` names
        the work in the messages of its failures (`ConversionFailed` and its kinds)."""
        job = _Job(function, args)
        self._start()
        try:
            self._pipe.send(job)
        except OSError:  # the child died since the last job: a new one
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
            raise Crashed(
                f"{what} crashed on it (exit code {code}); the file may be damaged, or need "
                f"more than the {self.memory_mb} MB of memory allowed (--file-memory-mb)"
            ) from None
        if outcome == "memory":
            self._stop()  # a fresh child for the next job: this one's heap may be spent
            raise OutOfMemory(
                f"needed more than {self.memory_mb} MB of memory to read, so it was stopped "
                "(split the file, or allow more with --file-memory-mb)"
            )
        if outcome == "failed":
            raise ConversionFailed(value)
        if outcome == "error":
            raise ConversionFailed(f"{what} failed: {value}")
        return value

    def _start(self) -> None:
        if self._child is not None and self._child.poll() is None:
            return
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self._child = subprocess.Popen(
            [sys.executable, "-m", "ragteam.documents.isolated", str(self.memory_mb)],
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


def _serve(memory_mb: int) -> None:
    """The child: convert each job read on stdin until told to stop (None) or stdin closes,
    within `memory_mb` of address space; answers go to the original stdout, and fd 1 becomes
    stderr (what converters print)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops us
    _limit_memory(memory_mb)
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


def _limit_memory(memory_mb: int) -> None:
    try:
        import resource
    except ImportError:  # Windows: no RLIMIT_AS; the time budget still holds
        return
    wanted = memory_mb * 2**20
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))


def convert_file(converter: str, path: str, settings: ConvertSettings) -> Converted:
    """In the child: the converter named "module:Class" reads the file."""
    return _named(converter)().convert(Path(path), settings)  # type: ignore[no-any-return]


def _named(spec: str) -> Any:
    module, _, name = spec.partition(":")
    found: Any = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    return found


def _run(job: _Job) -> tuple[str, Any]:
    try:
        return "ok", _named(job.function)(*job.args)
    except ConversionFailed as exc:
        return "failed", str(exc)
    except MemoryError:
        return "memory", ""
    except Exception as exc:  # noqa: BLE001 - any converter's failure is this file's
        return "error", f"{type(exc).__name__}: {exc}"


if __name__ == "__main__":
    _serve(int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_MEMORY_MB)
