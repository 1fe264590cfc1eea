"""ragteam's exceptions: one root, a few kinds; every message says what to do next."""

from __future__ import annotations

from collections.abc import Callable, Iterable


class RagteamError(Exception):
    """Root of every error ragteam raises on purpose."""


class InputError(RagteamError):
    """The user's input (question, file, option) cannot be used as given."""


class IndexUnusable(RagteamError):
    """An index on disk is missing, stale, corrupt or incompatible."""


class IndexBusy(InputError):
    """Another sync or build of the same index is running (one writer at a time)."""


class StorageError(RagteamError):
    """State could not be written (a full disk, no permission); what was there is intact."""

    @classmethod
    def writing(cls, what: object, exc: OSError, verb: str = "write") -> StorageError:
        reason = exc.strerror or str(exc) or type(exc).__name__
        return cls(
            f"could not {verb} {what} ({reason}); nothing written before was lost: free some "
            "space (or fix the permission) and run the command again"
        )


class ModelError(RagteamError):
    """A model could not be loaded or did not answer."""


class ServerUnreachable(ModelError):
    """An OpenAI-compatible server did not answer at its address."""


class ParseError(ModelError):
    """A model's reply did not match the schema an agent role asked for, even after a retry."""

    def __init__(self, role: str, reason: str, reply: str = "") -> None:
        self.role = role
        self.reason = reason
        self.reply = reply
        super().__init__(
            f"agent role '{role}' returned output that does not match its schema after a retry: "
            f"{reason}. Try a larger model (--model) or inspect the trace (--trace)."
        )


class UnknownName(RagteamError):
    """A name (strategy, retriever, model alias) is not registered."""

    def __init__(self, kind: str, name: str, valid: list[str]) -> None:
        self.kind, self.name, self.valid = kind, name, sorted(valid)
        known = f"; known: {', '.join(self.valid)}" if self.valid else ""
        super().__init__(f"unknown {kind} '{name}'{known}")


def refuse_unknown(
    given: Iterable[str], known: Iterable[str], say: Callable[[str, str], str]
) -> None:
    """Raise InputError(say(unknown, known)) when `given` holds a key `known` lacks; both are
    passed as sorted comma-separated text ("none" when nothing is known)."""
    listed = sorted(known)
    unknown = sorted(set(given) - set(listed))
    if unknown:
        raise InputError(say(", ".join(unknown), ", ".join(listed) or "none"))
