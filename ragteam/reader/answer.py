"""The span readers of one answer, carried in its context (`Context.readers`): every stage
that reads (the `read` strategy, SMART's and MA-RAG's locators, the verdict stage, the reader
support layer) takes its reader from here, so the answer is read, judged and labelled by one
set of weights and its own calibration, and a passage read twice in the answer goes through
the network once. Nothing is kept past the answer."""

from __future__ import annotations

import threading
from pathlib import Path

from ragteam.reader.read import Reader, default_weights, load_reader


class Readers:
    """Readers by weights file, each loaded on first use. The answer's reader (`answer()`) is
    the first one a stage asked for (a strategy's `weights`), else the shipped one."""

    def __init__(self) -> None:
        self._by_path: dict[Path, Reader] = {}
        self._first: Path | None = None
        self._lock = threading.Lock()  # an answer's agents may read at once (`adaptive`)

    def get(self, weights: Path | str | None = None) -> Reader:
        """The reader with `weights` (None or "": the shipped ones); raises InputError when the
        file is missing or not a reader's."""
        path = Path(weights).expanduser().resolve() if weights else default_weights()
        with self._lock:
            found = self._by_path.get(path)
            if found is None:
                found = self._by_path[path] = load_reader(path)
            if self._first is None:
                self._first = path
            return found

    def answer(self) -> Reader:
        """The reader that read this answer (the shipped one when none has yet)."""
        return self.get(self._first)
