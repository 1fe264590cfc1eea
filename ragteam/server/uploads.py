"""Adding and removing a served folder index's documents over HTTP, then syncing it.

`PUT /v1/indexes/NAME/documents/FILE` writes the request's body as FILE at the top of the
indexed folder; `DELETE` removes it; both sync the index and answer with what the sync made of
the file. What a client can do to the server's disk is kept small:

- a name is one plain file name (no folder part, no `..`, not hidden, no control characters,
  at most 255 bytes); a file whose suffix no converter reads is kept only when its bytes are
  text (read as plain text: `squid.conf`, `README`); an existing file is replaced only
  when asked (`?replace=true`), never through a link;
- the body is streamed to a hidden file beside its place and, when whole, linked in under its
  name, which fails if a file of that name appeared meanwhile (a 409: of concurrent uploads of
  one name, one wins); only `replace` renames over a file. A cut upload leaves nothing behind
  (a kill's leftovers are removed when the server starts), and a body past the limit
  (`--max-upload-mb`) is refused as it arrives, whatever its Content-Length says;
- off loopback the server has a key (ServerConfig.check), and these routes need it."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Query, Request

from ragteam.documents import supported_suffixes
from ragteam.documents.base import looks_like_text
from ragteam.errors import IndexBusy, InputError, RagteamError, UnknownName
from ragteam.server.redact import redact_all

if TYPE_CHECKING:
    from ragteam.server.service import Service

UPLOAD_PREFIX = ".ragteam-upload-"  # hidden: a sync running meanwhile skips it
MAX_NAME_BYTES = 255


class TooLarge(InputError):
    """An upload's body is over the server's limit."""

    @classmethod
    def over(cls, limit: int) -> TooLarge:
        return cls(
            f"the file is over {limit // 2**20} MiB, the most this server takes "
            "(ragteam serve --max-upload-mb)"
        )


class LastDocument(InputError):
    """Removing the only file an index reads: refused before the disk is touched."""


class NameTaken(InputError):
    """A file of the upload's name is in the folder and the upload does not replace it."""

    @classmethod
    def of(cls, name: str) -> NameTaken:
        return cls(f"{name} is already in the folder: add ?replace=true to replace it")


def checked_name(name: str) -> str:
    """`name` when it is a plain file name; an InputError saying why not."""
    if not name or name in (".", "..") or "/" in name or "\\" in name:
        raise InputError(f"{name!r} is not a plain file name: send one name, no folder")
    if name.startswith("."):
        raise InputError(f"{name!r} is a hidden name: a sync would skip it")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise InputError("the file name holds control characters")
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise InputError(f"the file name is over {MAX_NAME_BYTES} bytes")
    return name


def text_unless_known(path: Path, name: str) -> None:
    """Refuse the uploaded bytes at `path` for `name` when no converter reads its suffix and
    the bytes are not text (an upload whose bytes are text is read as plain text)."""
    suffix = Path(name).suffix.lower()
    if suffix not in supported_suffixes() and not looks_like_text(path):
        raise InputError(
            f"no converter reads {suffix or 'files without a suffix'} and its bytes are not "
            f"text: send one of {', '.join(supported_suffixes())}, or a text file"
        )


def place(folder: Path, name: str) -> Path:
    """Where `name` goes in `folder` (checked: inside it, not a link)."""
    root = folder.resolve()
    target = root / checked_name(name)
    if target.is_symlink():
        raise InputError(f"{name} is a link in the folder: ragteam does not write through it")
    if target.parent != root:
        raise InputError(f"{name!r} would not stand in the indexed folder")
    return target


async def receive(chunks: AsyncIterator[bytes], target: Path, limit: int, replace: bool) -> int:
    """Stream `chunks` to `target` (aside, then renamed); the bytes written. A body over
    `limit` bytes is a TooLarge (nothing written); an existing file needs `replace`."""
    if target.exists() and not replace:
        raise NameTaken.of(target.name)
    if target.exists() and not target.is_file():
        raise InputError(f"{target.name} is not a file in the folder")
    # the writer's pid in the name: a server starting beside it leaves a live upload alone
    tmp = target.with_name(f"{UPLOAD_PREFIX}{os.getpid()}-{secrets.token_hex(6)}")
    size = 0
    try:
        with open(tmp, "xb") as out:
            async for chunk in chunks:
                size += len(chunk)
                if size > limit:
                    raise TooLarge.over(limit)
                await asyncio.to_thread(out.write, chunk)
            out.flush()
            os.fsync(out.fileno())
        if size == 0:
            raise InputError("the body is empty: send the file's bytes")
        text_unless_known(tmp, target.name)
        if replace:
            os.replace(tmp, target)
        else:  # a link fails if the name was taken while the body streamed: nothing is lost
            _link_new(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return size


# what os.link says on a file system without hard links (FAT, some network shares)
NO_HARD_LINKS = {errno.EPERM, errno.EXDEV, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK}


def _link_new(tmp: Path, target: Path) -> None:
    """Give `tmp`'s file the name `target`, never over a file of that name (NameTaken). Only
    a file system without hard links takes the other way (the name taken exclusively, then
    filled); any other failure (the upload's file gone) is raised, and nothing is left under
    the name."""
    try:
        os.link(tmp, target)
        return
    except FileExistsError:
        raise NameTaken.of(target.name) from None
    except OSError as exc:
        if exc.errno not in NO_HARD_LINKS:
            raise InputError(
                f"the upload of {target.name} was lost before it was saved ({exc.strerror}): "
                "send it again"
            ) from exc
    try:
        os.close(os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    except FileExistsError:
        raise NameTaken.of(target.name) from None
    try:
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            target.unlink()  # the empty file that held the name
        raise


def _writer_alive(name: str) -> bool:
    """Whether the process that named an upload's file (`.ragteam-upload-PID-TOKEN`) runs."""
    pid = name.removeprefix(UPLOAD_PREFIX).split("-", 1)[0]
    if not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive
    return True


def clean_leftovers(folder: Path) -> list[str]:
    """Remove the hidden files of uploads a kill cut short from the top of `folder` (never one
    a live process is writing: another server on the same folder); their names."""
    removed = []
    for leftover in folder.glob(f"{UPLOAD_PREFIX}*"):
        if leftover.is_file() and not leftover.is_symlink() and not _writer_alive(leftover.name):
            with contextlib.suppress(OSError):
                leftover.unlink()
                removed.append(leftover.name)
    return removed


def clean_served(service: Service) -> None:
    """Remove what uploads cut by a kill left in each served folder (when the server starts)."""
    for name in service.config.indexes:
        with contextlib.suppress(RagteamError, OSError):
            clean_leftovers(service.folder(name))


def remove(folder: Path, name: str) -> None:
    """Delete `name` from the top of `folder` (a file, not a link); UnknownName when absent."""
    target = place(folder, name)
    if not target.is_file():
        present = sorted(p.name for p in folder.iterdir() if p.is_file())[:20]
        raise UnknownName("document", name, present)
    target.unlink()


def is_upload(method: str, path: str) -> bool:
    """Whether a request is a document upload (its body streamed to disk by its route)."""
    parts = path.split("/")
    return (
        method == "PUT"
        and len(parts) == 6
        and parts[1:3] == ["v1", "indexes"]
        and (parts[4] == "documents")
    )


def add_document_routes(app: FastAPI, service: Service, auth: list[Any]) -> None:
    """PUT and DELETE of one document of a served folder index (see the module's doc)."""

    @app.put("/v1/indexes/{name}/documents/{filename}", dependencies=auth)
    async def add_document(
        name: str, filename: str, request: Request, replace: bool = Query(False)
    ) -> dict[str, Any]:
        """Add (or, with `replace`, replace) the file FILENAME: the request's body is its
        bytes. The index is synced; the answer says what the sync made of the file."""
        folder = service.folder(name)
        target = place(folder, filename)
        limit = service.config.max_upload_mb * 2**20
        said = request.headers.get("content-length", "")
        if said.isdigit() and int(said) > limit:  # refused before a byte is read
            raise TooLarge.over(limit)
        size = await receive(request.stream(), target, limit, replace)
        return redact_all(await _synced(service, name, target.name, size), service.config)

    @app.delete("/v1/indexes/{name}/documents/{filename}", dependencies=auth)
    async def remove_document(name: str, filename: str) -> dict[str, Any]:
        """Remove the file FILENAME from the indexed folder, then sync the index. The last
        file the index reads is refused before it is touched (a sync would then keep
        serving its text)."""
        folder = service.folder(name)
        read = [d["path"] for d in service.documents(name)["documents"] if d["status"] == "read"]
        if read == [filename]:
            raise LastDocument(
                f"{filename} is the only file index {name} reads: removing it would leave the "
                "index serving its text. Add another file first, or remove the index itself"
            )
        remove(folder, filename)
        return redact_all(await _synced(service, name, filename, 0), service.config)


async def _synced(service: Service, name: str, filename: str, size: int) -> dict[str, Any]:
    """Sync the index; the file's state after it (None once removed), and the sync's counts."""
    failed = ""
    try:
        report: dict[str, Any] | None = await asyncio.to_thread(service.sync, name)
    except IndexBusy:  # a sync (the watcher's, another client's) is running: it or the next
        report = None  # one reads the folder as it now is
    except RagteamError as exc:  # the disk has changed already: say so, and why not synced
        report, failed = None, str(exc)
    listed = service.documents(name)
    state = next((d for d in listed["documents"] if d["path"] == filename), None)
    synced = report is not None
    done = {"name": filename, "bytes": size, "file": state, "synced": synced, "sync": report}
    return {**done, "sync_failed": failed} if failed else done
