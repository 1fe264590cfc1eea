"""What the routes share: the configuration, the one model, loaded indexes, the gate and the
worker threads. Answers run in worker threads; the event loop only waits."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragteam.asking import AskRequest
from ragteam.asking.conversation import Conversation, Turn
from ragteam.documents import supported_suffixes
from ragteam.errors import IndexUnusable, InputError, RagteamError, UnknownName, refuse_unknown
from ragteam.llm import load_model
from ragteam.llm.base import ChatModel
from ragteam.llm.deferred import Deferred, TakingTurns
from ragteam.retrieval.index import Index, load_index, read_manifest
from ragteam.retrieval.manifest import Manifest
from ragteam.server.asking import Asked
from ragteam.server.config import ServerConfig
from ragteam.server.cores import CoreShare
from ragteam.server.limits import Closing, Gate
from ragteam.server.on_disk import manifest_stamp, on_disk, raise_if_unbuilt
from ragteam.server.words import with_words
from ragteam.strategies import client_options
from ragteam.strategies.base import QUESTION_SHARE
from ragteam.trace import Step
from ragteam.types import Answer

if TYPE_CHECKING:
    from ragteam.eval.report import Table


class Cancelled(Exception):
    """The client went away: the answer stops at its next step."""


class Service:
    def __init__(
        self, config: ServerConfig, model: ChatModel | None = None, cores: int | None = None
    ) -> None:
        """`cores`: this process's share of the machine's (all of them without --workers)."""
        config.check()
        self.config = config
        self.cores = CoreShare(cores)
        self._model = self._shared(model) if model is not None else None
        # name -> (its manifest's identity when loaded, the index, when it was loaded)
        self._indexes: dict[str, tuple[tuple[int, int] | None, Index, float]] = {}
        self._synced: dict[str, dict[str, Any]] = {}  # each index's last sync through the server
        # run name -> (results.jsonl's size and mtime, its table): read again only when it changed
        self._tables: dict[str, tuple[tuple[int, int], Table]] = {}
        self._lock = threading.Lock()
        self._loading: dict[str, threading.Lock] = {}  # an index's own lock while it loads
        self.gate = Gate(config.concurrency, config.queue_size, config.queue_timeout)
        self.pool = ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="answer")
        self.closing = threading.Event()  # set at shutdown: running answers stop at their next step
        self.watching: dict[str, dict[str, Any]] = {}
        # what `server.warm` loaded before the first question ("not started": nothing asked it)
        self.warm_state: dict[str, Any] = {"state": "not started"}
        if config.watch:
            from ragteam.server.watching import start_watching

            self.watching = start_watching(self)

    def model(self) -> ChatModel:
        with self._lock:  # loaded once, on first use, for every request
            if self._model is None:
                self._model = self._shared(load_model(self.config.model, self.config.model_options))
            return self._model

    def _shared(self, model: ChatModel) -> ChatModel:
        """`model` as answers running at once share it: its calls in turn unless it serves
        them concurrently."""
        if self.config.concurrency > 1 and not model.parallel:
            return TakingTurns(model)  # type: ignore[return-value]
        return model

    def question_tokens(self) -> int:
        """How many tokens of a question the model reads (`fit_question`), known without
        loading the model."""
        with self._lock:
            model = self._model
        if model is not None:
            window = model.context_length
        else:
            from ragteam.llm import backend_of

            window = backend_of(self.config.model)[0].window(self.config.model_options)
        return int(window * QUESTION_SHARE)

    def index(self, name: str | None) -> Index | None:
        """The served index, loaded again between requests when a sync swapped in a new
        generation (its manifest is another file then); while a swap is under way, or if the
        new one cannot be loaded, the loaded one goes on answering."""
        if name is None:
            return None
        directory = self._index_dir(name)
        stamp = manifest_stamp(directory)
        with self._lock:
            loading = self._loading.setdefault(name, threading.Lock())
            known = self._indexes.get(name)
        # one load of an index at a time, outside the service's lock: /healthz and the other
        # indexes are not held up by a large index's seconds of loading, and while a new
        # generation loads the one loaded goes on answering
        if known is not None and (stamp is None or stamp == known[0]):
            return known[1]
        if known is not None and not loading.acquire(blocking=False):
            return known[1]
        if known is None:
            loading.acquire()
        try:
            with self._lock:
                known = self._indexes.get(name)
            if known is not None and (stamp is None or stamp == known[0]):
                return known[1]
            try:
                loaded = load_index(directory)
            except IndexUnusable:
                if known is None:
                    raise_if_unbuilt(name, directory)
                    raise
                return known[1]
            with self._lock:
                self._indexes[name] = (stamp, loaded, time.time())
        finally:
            loading.release()
        # citations look passages up by id: their table is built beside the first answer
        threading.Thread(target=loaded.prepare_lookups, name="ids", daemon=True).start()
        return loaded

    def generations(self) -> dict[str, dict[str, Any]]:
        """Every served index from the start: when its generation was built and loaded (None:
        not yet asked of) and its passages, read from its manifest until it is loaded; the
        last sync the server ran (`last_sync`) and its folder watch."""
        with self._lock:
            found: dict[str, dict[str, Any]] = {
                name: {
                    "built_at": index.manifest.built_at,
                    "passages": len(index.passages),
                    "loaded_at": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(loaded)),
                }
                for name, (_stamp, index, loaded) in self._indexes.items()
            }
            synced = {name: dict(outcome) for name, outcome in self._synced.items()}
        for name, directory in self.config.indexes.items():
            if name not in found:
                found[name] = on_disk(name, directory)
            if name in synced:
                found[name]["last_sync"] = synced[name]
        for name, watched in self.watching.items():
            found.setdefault(name, {})["watch"] = dict(watched)
        return found

    def sync(self, name: str) -> dict[str, Any]:
        """Sync a served folder index from its folder (one sync at a time per index)."""
        from ragteam.retrieval.resync import resync
        from ragteam.retrieval.sync import report_dict

        at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        try:
            directory = self._index_dir(name)
            raise_if_unbuilt(name, directory)
            report = resync(directory)
        except Exception as exc:
            with self._lock:
                self._synced[name] = {"at": at, "ok": False, "detail": str(exc)}
            raise
        with self._lock:
            changes = {kind: len(paths) for kind, paths in report.changes.items()}
            self._synced[name] = {"at": at, "ok": True, "changes": changes}
        self.index(name)  # the next request answers from the new generation
        return report_dict(report)

    def folder(self, name: str) -> Path:
        """The folder a served folder index is synced from (an InputError for an index of
        one file, such as a JSONL corpus)."""
        from ragteam.retrieval.resync import recorded_settings

        found = recorded_settings(self._index_dir(name))
        if found is None or not Path(found[2]).is_dir():
            raise InputError(
                f"the index {name} was built from one file (a JSONL corpus), not a folder: "
                "documents are added to folder indexes (`ragteam index sync FOLDER`)"
            )
        return Path(found[2])

    def index_name(self, name: str | None) -> str | None:
        """`name`, or the only served index when none is named."""
        if name is None and len(self.config.indexes) == 1:
            return next(iter(self.config.indexes))
        return name

    def manifest(self, name: str) -> Manifest:
        directory = self._index_dir(name)
        raise_if_unbuilt(name, directory)
        return read_manifest(directory)

    def public_manifest(self, name: str) -> dict[str, Any]:
        """The manifest as clients see it: named, without the server's own paths."""
        data = dict(self.manifest(name).raw)
        source = dict(data.get("source") or {})
        source.pop("path", None)  # the server's file system stays its own
        return {**data, "name": name, "source": source}

    def documents(self, name: str) -> dict[str, Any]:
        """The files of a served index and their states (none for a JSONL index)."""
        from ragteam.retrieval.sources import read_sources, source_dict

        manifest = self.manifest(name)
        sources, _settings = read_sources(self._index_dir(name))
        files = [source_dict(s) for s in sorted(sources.values(), key=lambda s: s.path)]
        counts: dict[str, int] = {}
        for f in files:
            counts[f["status"]] = counts.get(f["status"], 0) + 1
        return {
            "name": name,
            "folder": manifest.source.is_folder,
            "documents": files,
            "counts": counts,
            # the formats PUT .../documents/NAME reads; a file of another suffix is taken
            # when its bytes are text (read as plain text)
            "accepts": supported_suffixes(),
        }

    def _index_dir(self, name: str) -> Path:
        if name not in self.config.indexes:
            # a name with a path's marks is not echoed: redacting a served folder out of it
            # would say which server path holds that index
            said = name if not re.search(r"[/\\]", name) else "(a path, not a served name)"
            raise UnknownName("index", said, list(self.config.indexes))
        return self.config.indexes[name]

    def check(self, request: Asked) -> AskRequest:
        """Refuse a request before any work (a stream then fails with a status, not an event);
        returns its answer options as the library takes them, with the options the strategy
        will get."""
        request.index = self.index_name(request.index)
        if len(request.question) > self.config.max_question_chars:
            raise InputError(
                f"the question has {len(request.question):,} characters; this server takes at "
                f"most {self.config.max_question_chars:,}"
            )
        asked = request.request()
        return replace(asked, options=self._options(asked.strategy, asked.options))

    def answer(self, request: Asked, on_step=None, on_writing=None) -> Answer:  # noqa: ANN001
        """Answer one request in the calling thread, with the cores that answers running now
        leave it (`CoreShare`); at shutdown it stops at its next step (the process would
        otherwise wait for it to finish before exiting)."""
        with self.cores.running():
            return self._answer(request, on_step, on_writing)

    def _answer(self, request: Asked, on_step=None, on_writing=None) -> Answer:  # noqa: ANN001
        asked = self.check(request)
        talk = Conversation(
            [Turn(t.question, t.answer) for t in request.earlier], self.config.max_question_chars
        )

        def stepped(step: Step) -> None:
            if self.closing.is_set():
                raise Closing()
            if on_step is not None:
                on_step(step)

        loading = self._load_said(request.strategy, stepped)
        result = talk.ask(
            request.question,
            asked,
            index=self.index(request.index),
            model=Deferred(self.model),  # loaded only if the strategy asks it anything
            on_step=stepped,
            on_writing=on_writing,
            before=loading,  # they happened first, and were said as they did
        )
        return result

    def _load_said(self, strategy: str, stepped: Callable[[Step], None]) -> list[Step]:
        """For a strategy that asks the model (`needs_model`, True unless it says), the model
        loaded before it starts, when this is its first use, said as it begins and when done
        (a first load takes seconds: a status line must not say "searched" meanwhile)."""
        from ragteam.strategies import strategy_class

        with self._lock:
            loaded = self._model is not None
        if loaded or not strategy_class(strategy).needs_model:
            return []
        name = self.config.model
        said = f"loading the model {name}: its first use here"
        began = Step("note", "server", None, said, meta={"event": "model_loading"})
        stepped(began)
        started = time.perf_counter()
        self.model()
        seconds = time.perf_counter() - started
        said = f"loaded the model {name} in {seconds:.1f} s"
        done = Step("note", "server", None, said, seconds=seconds, meta={"event": "model_loaded"})
        stepped(done)
        return [began, done]

    def _options(self, strategy: str, given: dict[str, Any]) -> dict[str, Any]:
        """The request's options, allow-listed: a client never names a server file (the
        adaptive router's state comes from --router-state only)."""
        refuse_unknown(
            given,
            client_options(strategy),
            lambda refused, allowed: (
                f"option {refused} of '{strategy}' cannot be set by a "
                f"request; options a request may set: {allowed}"
            ),
        )
        return {**given, **self.options_for(strategy)}

    def options_for(self, strategy: str) -> dict[str, Any]:
        """The options the server sets itself (the adaptive router's state)."""
        if strategy == "adaptive" and self.config.router_state:
            return {"state": str(self.config.router_state)}
        return {}

    def run_dir(self, name: str) -> Path:
        runs = self.config.runs_dir
        if runs is None or not runs.is_dir():
            raise UnknownName("run", name, [])
        found = {p.name: p for p in runs.iterdir() if _is_run(p)}
        if name not in found:
            raise UnknownName("run", name, list(found))
        return found[name]

    def run_index(self, name: str) -> str | None:
        """The served index a run was made over (the same corpus), so its passages open; None
        when no served index holds that corpus."""
        try:
            config = json.loads((self.run_dir(name) / "config.json").read_text("utf-8"))
            wanted = config["index"]["corpus_checksum"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        for served in self.config.indexes:
            try:
                if self.manifest(served).corpus_checksum == wanted:
                    return served
            except RagteamError:
                continue
        return None

    def run_table(self, name: str) -> Table:
        """The run's rows (label -> question id -> row), read again only when its
        results.jsonl changed (a run still being written grows)."""
        from ragteam.eval.report import load_runs

        path = self.run_dir(name)
        stat = (path / "results.jsonl").stat()
        stamp = (stat.st_size, stat.st_mtime_ns)
        with self._lock:
            known = self._tables.get(name)
        if known is not None and known[0] == stamp:
            return known[1]
        table = load_runs([path])
        with self._lock:
            self._tables[name] = (stamp, table)
        return table

    def run_names(self) -> list[str]:
        runs = self.config.runs_dir
        if runs is None or not runs.is_dir():
            return []
        return sorted(p.name for p in runs.iterdir() if _is_run(p))

    def close(self) -> None:
        self.gate.close()
        self.closing.set()
        self.pool.shutdown(wait=False, cancel_futures=True)


def step_event(number: int, step: Step) -> dict[str, Any]:
    """A trace step as the stream sends it, said in words too (`server.words`)."""
    return with_words({"number": number, **asdict(step)})


def _is_run(path: Path) -> bool:
    return (path / "results.jsonl").is_file() and (path / "config.json").is_file()
