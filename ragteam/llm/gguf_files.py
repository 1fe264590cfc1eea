"""What ragteam reads from GGUF files without loading them: a content fingerprint (a model's
identity in caches and run configs), and the base model a LoRA adapter records."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ragteam.errors import ModelError

BASE_KEY = "ragteam.base.fingerprint"  # written by `ragteam train export` into an adapter
BASE_NAME_KEY = "ragteam.base.name"


def gguf_fingerprint(path: Path, samples: int = 16, block: int = 1 << 16) -> str:
    """Size plus a hash of blocks spread over the file: two fine-tunes of one base (same name,
    same size) differ, and a multi-GB model is not read whole. Keys the LLM cache."""
    size = path.stat().st_size
    digest = hashlib.blake2b(str(size).encode(), digest_size=8)
    with path.open("rb") as f:
        for i in range(samples):
            f.seek(max(0, (size - block) * i // max(1, samples - 1)))
            digest.update(f.read(block))
    return f"{size}:{digest.hexdigest()}"


def adapter_base(path: Path) -> tuple[str, str]:
    """(fingerprint, file name) of the base model a ragteam adapter GGUF records ('' if none);
    raises a clear error for a file that is not a GGUF LoRA adapter."""
    from gguf import GGUFReader

    try:
        reader = GGUFReader(path)
    except Exception as exc:  # whatever a damaged or foreign file makes the reader raise
        raise ModelError(
            f"{path} is not a readable GGUF file ({exc}); re-export the adapter"
        ) from exc
    kind = reader.fields.get("general.type")
    if kind is None or str(kind.contents()) != "adapter":
        raise ModelError(f"{path} is a GGUF model, not a LoRA adapter: use --model {path}")

    def text(key: str) -> str:
        field = reader.fields.get(key)
        return str(field.contents()) if field is not None else ""

    return text(BASE_KEY), text(BASE_NAME_KEY)


def finish_gguf(writer: Any, tmp: Path, out: Path) -> Path:
    """Write a GGUFWriter's file aside, then move it into place: never a half-written file."""
    try:
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return out
