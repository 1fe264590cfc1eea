"""Deciding, file by file, what a sync does: not read (same size and mtime), touched (same
bytes), renamed (the bytes of a file gone from disk), converted (new bytes; a conversion of the
same bytes comes from the cache), or reported (skipped, failed, with the reason)."""

from __future__ import annotations

from typing import Any

from ragteam.documents import ConversionFailed, ConvertSettings, converters_by_suffix
from ragteam.documents.base import converter_for, is_isolated, size_cap_mb
from ragteam.documents.chunking import CHUNKING_VERSION, Piece, TokenCount, chunk
from ragteam.documents.isolated import DEFAULT_MEMORY_MB, DEFAULT_SECONDS, Isolated, OverBudget
from ragteam.retrieval.digests import sha256_of
from ragteam.retrieval.index import BuildProgress
from ragteam.retrieval.scan import Found
from ragteam.retrieval.sources import Source, SyncCache


class Walk:
    """Decides, file by file, what a sync does with it (see the module's doc)."""

    def __init__(
        self,
        previous: dict[str, Source],
        reusable: bool,
        convert: ConvertSettings,
        overlap: int,
        budget: int,
        count: TokenCount,
        cache: SyncCache,
        file_seconds: float = DEFAULT_SECONDS,
        file_memory_mb: int = DEFAULT_MEMORY_MB,
    ) -> None:
        self.previous = previous if reusable else {}
        # its child starts when a file needs it
        self.isolated = Isolated(file_seconds, file_memory_mb)
        self.convert, self.overlap = convert, overlap
        self.budget, self.count, self.cache = budget, count, cache
        kinds = ("new", "changed", "renamed", "deleted", "touched", "unchanged")
        self.changes: dict[str, list[str]] = {kind: [] for kind in kinds}
        self.converted = 0
        self._all_previous = previous
        self._by_suffix = converters_by_suffix()  # once a sync, not once a file

    def run(
        self, found: list[Found], progress: BuildProgress | None, unseen: tuple[str, ...] = ()
    ) -> list[Source]:
        """The sources of `found`; files last read under a folder that could not be listed
        (path prefixes `unseen`) are kept as they were, not taken for deleted."""
        here = {f.path for f in found}
        kept = [
            s
            for s in self.previous.values()
            if s.path not in here and any(s.path.startswith(p) for p in unseen)
        ]
        self.changes["unchanged"] += [s.path for s in kept]
        here |= {s.path for s in kept}
        gone = [s for s in self.previous.values() if s.path not in here and s.status == "read"]
        self._vanished = {s.sha256: s for s in gone}
        self._renamed_from: set[str] = set()
        sources = []
        with self.isolated:
            for number, file in enumerate(found, start=1):
                sources.append(self._one(file))
                if progress:
                    progress("read", number, len(found))
        self.changes["deleted"] = sorted(s.path for s in gone if s.path not in self._renamed_from)
        return sources + kept

    def passages_changed(self) -> bool:
        return any(self.changes[k] for k in ("new", "changed", "renamed", "deleted"))

    def recorded_changed(self, sources: list[Source]) -> bool:
        """Whether the source list differs from the recorded one (a touch, a new skip)."""
        old = {
            s.path: (s.size, s.mtime_ns, s.status, s.reason) for s in self._all_previous.values()
        }
        new = {s.path: (s.size, s.mtime_ns, s.status, s.reason) for s in sources}
        return old != new

    def _one(self, file: Found) -> Source:
        prev = self.previous.get(file.path)
        converter = self._converter_of(file, prev)
        if (
            prev
            and prev.status == "read"
            and (prev.size, prev.mtime_ns) == (file.size, file.mtime_ns)
            and _read_by(prev, converter)
        ):
            self.changes["unchanged"].append(file.path)
            return prev
        if converter is None:
            suffix = file.file.suffix or "(no suffix)"
            reason = (
                f"no converter reads {suffix} files and {NOT_TEXT} "
                "(`ragteam index formats` lists the formats)"
            )
            return Source(file.path, file.size, file.mtime_ns, status="skipped", reason=reason)
        if file.size == 0:
            return Source(file.path, 0, file.mtime_ns, status="failed", reason="the file is empty")
        if file.size > (cap := size_cap_mb(converter)) * 2**20:
            reason = f"over {cap} MB, the most a {converter.name} file is read to (split it)"
            return Source(file.path, file.size, file.mtime_ns, status="skipped", reason=reason)
        try:
            sha = sha256_of(file.file)
        except OSError as exc:
            reason = f"could not be read ({exc.strerror}; moved while syncing?)"
            return Source(file.path, file.size, file.mtime_ns, status="failed", reason=reason)
        return self._by_content(file, prev, sha, converter)

    def _converter_of(self, file: Found, prev: Source | None) -> Any:
        """The converter its suffix names; for another suffix, the text converter when the
        file's bytes are text (`converter_for`), sniffed only when the file changed since the
        last sync: an unchanged one is what it was (read as text, or skipped as not text)."""
        known = self._by_suffix.get(file.file.suffix.lower())
        if known is not None:
            return known
        if prev is not None and (prev.size, prev.mtime_ns) == (file.size, file.mtime_ns):
            text = self._by_suffix.get(".txt")
            if prev.status == "read" and _read_by(prev, text):
                return text
            if prev.status == "skipped" and NOT_TEXT in prev.reason:
                return None
        return converter_for(file.file, self._by_suffix)

    def _by_content(self, file: Found, prev: Source | None, sha: str, converter: Any) -> Source:
        if prev and prev.status == "read" and prev.sha256 == sha and _read_by(prev, converter):
            self.changes["touched"].append(file.path)
            return Source(**{**prev.__dict__, "size": file.size, "mtime_ns": file.mtime_ns})
        label = _label(converter)
        if sha in self._vanished and self._vanished[sha].converter == label:
            # the same bytes read the same way: a rename (a new suffix read by another
            # converter, .txt -> .html, is converted again)
            old = self._vanished.pop(sha)
            self._renamed_from.add(old.path)
            self.changes["renamed"].append(f"{old.path} -> {file.path}")
            moved = {**old.__dict__, "path": file.path, "size": file.size}
            return Source(**{**moved, "mtime_ns": file.mtime_ns})
        source = self._convert(file, sha, converter)
        if source.status == "read":
            self.changes["changed" if prev and prev.status == "read" else "new"].append(file.path)
        elif prev and prev.status == "read":
            self.changes["changed"].append(file.path)  # it now fails: its passages go
        return source

    def _read(self, converter: Any, file: Found) -> Any:
        """The converter's reading of the file: in the child process, within the file's time
        budget, for a converter that asks for it (documents/isolated.py); here otherwise."""
        if is_isolated(converter):
            return self.isolated.convert(converter, file.file, self.convert)
        return converter.convert(file.file, self.convert)

    def _more_budget(self, stopped: dict[str, Any]) -> bool:
        """Whether this sync allows more time or memory than a file was stopped under (a
        record written before memory had a budget ran under none smaller than now's)."""
        memory = stopped.get("memory_mb", self.isolated.memory_mb)
        return stopped["seconds"] < self.isolated.seconds or memory < self.isolated.memory_mb

    def _convert(self, file: Found, sha: str, converter: Any) -> Source:
        label = _label(converter)
        # the pieces are kept with the conversion: another cut is another key
        cut = f"{self.budget}:{self.overlap}:{CHUNKING_VERSION}"
        key = f"{sha}:{label}:{self.convert.key()}:{cut}"
        done = self.cache.conversion(key)
        if done is not None and "timed_out" in done:
            if not self._more_budget(done):  # the budgets it ran out of: not again
                reason = done["timed_out"]
                return Source(file.path, file.size, file.mtime_ns, sha, label, "failed", reason)
            done = None
        if done is None:
            try:
                converted = self._read(converter, file)
            except OverBudget as exc:
                budgets = {"seconds": self.isolated.seconds, "memory_mb": self.isolated.memory_mb}
                self.cache.put_conversion(key, {"timed_out": str(exc), **budgets})
                return Source(file.path, file.size, file.mtime_ns, sha, label, "failed", str(exc))
            except ConversionFailed as exc:
                return Source(file.path, file.size, file.mtime_ns, sha, label, "failed", str(exc))
            except Exception as exc:  # noqa: BLE001 - any converter's failure is this file's
                reason = f"the {converter.name} converter failed: {type(exc).__name__}: {exc}"
                return Source(file.path, file.size, file.mtime_ns, sha, label, "failed", reason)
            pieces = [
                _piece(piece)
                for piece in chunk(converted.units, self.budget, self.count, self.overlap)
            ]
            done = {"title": converted.title, "notes": converted.notes, "pieces": pieces}
            if _changed_since(file):  # the text read may not be the bytes hashed: not cached
                reason = "changed while it was read; the next sync reads it again"
                return Source(file.path, file.size, file.mtime_ns, "", label, "failed", reason)
            self.cache.put_conversion(key, done)
            self.converted += 1
        if not done["pieces"]:
            return Source(
                file.path, file.size, file.mtime_ns, sha, label, "failed", "no text found in it"
            )
        return Source(
            file.path,
            file.size,
            _settled_mtime(file),
            sha,
            label,
            "read",
            "",
            done["notes"],
            done["title"],
            stored=self.cache.kept_pieces(key),  # read back when written: no text held here
        )


def _piece(piece: Piece) -> dict[str, Any]:
    """A passage as its source records it: its text and where it stands."""
    where = piece.locator().fields()
    del where["source"]  # the source row names its file
    out = {"text": piece.text, **where}
    if piece.unit.where.record:
        out["title"] = piece.unit.title
    return out


def _settled_mtime(file: Found) -> int:
    """The recorded mtime, or 0 when the file changed while it was read (so the next sync
    reads it again instead of trusting a stat that no longer matches the text)."""
    try:
        stat = file.file.stat()
    except OSError:
        return 0
    return file.mtime_ns if (stat.st_size, stat.st_mtime_ns) == (file.size, file.mtime_ns) else 0


def _changed_since(file: Found) -> bool:
    """Whether the file's size or mtime moved since it was found (and hashed): what was
    converted may then be other bytes than those its cache key names."""
    try:
        stat = file.file.stat()
    except OSError:
        return True
    return (stat.st_size, stat.st_mtime_ns) != (file.size, file.mtime_ns)


# a skip's reason says it; an unchanged file so skipped is not sniffed again
NOT_TEXT = "its bytes are not text"


def _label(converter: Any) -> str:
    """How a source records the converter that read it."""
    return f"{converter.name}@{converter.version}"


def _read_by(prev: Source, converter: Any) -> bool:
    """Whether `prev` was read by this converter as it is now (a new version of a converter
    reads its files again: an upgrade that reads tables better reaches the indexes built
    before it at their next sync)."""
    return converter is not None and prev.converter == _label(converter)
