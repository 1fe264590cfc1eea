"""`ragteam index build|info`: indexes on disk, with progress bars."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, TaskID, TextColumn, TimeElapsedColumn

from ragteam.commands.common import LoggedProgress, err, friendly_errors, out
from ragteam.retrieval.dense import INDEX_KINDS, DenseSettings
from ragteam.retrieval.encoder_registry import parse_encoder
from ragteam.retrieval.encoders import LOCAL_BACKENDS
from ragteam.retrieval.index import RETRIEVERS, build_index, load_index, read_manifest

index_app = typer.Typer(no_args_is_help=True, help="Build and inspect indexes.")


@index_app.command("build")
def index_build(
    src: Annotated[Path, typer.Argument(help="JSONL of {id, title, text} or a folder of .txt/.md")],
    out_dir: Annotated[Path, typer.Option("--out", help="index directory to write")],
    retriever: Annotated[str, typer.Option(help="|".join(RETRIEVERS))] = "hybrid",
    passage_words: Annotated[
        int, typer.Option(min=0, max=100_000, help="words per passage (0: keep whole)")
    ] = 100,
    bm25_stemmer: Annotated[str, typer.Option(help="Snowball language, or none")] = "english",
    encoder: Annotated[
        str,
        typer.Option(
            help=f"{' | '.join(LOCAL_BACKENDS)} | openai:MODEL (with --embed-url) | an installed "
            "encoder plugin's name"
        ),
    ] = "torch",
    embed_url: Annotated[
        str, typer.Option(help="OpenAI-compatible server for openai:MODEL embeddings")
    ] = "",
    embed_batch: Annotated[int, typer.Option(min=1, max=4096, help="texts per request")] = 64,
    index_type: Annotated[str, typer.Option(help="FAISS index: " + " | ".join(INDEX_KINDS))] = (
        "flat"
    ),
    shards: Annotated[int, typer.Option(min=1, max=4096, help="FAISS shards, merged")] = 1,
    mmap: Annotated[bool, typer.Option(help="map BM25/FAISS files at load instead of reading")] = (
        False
    ),
    nlist: Annotated[int, typer.Option(min=0, help="IVF lists (0: 4*sqrt(n))")] = 0,
    nprobe: Annotated[int, typer.Option(min=1, help="IVF lists searched per query")] = 16,
    ef_search: Annotated[int, typer.Option(min=1, help="HNSW search breadth")] = 64,
    ray: Annotated[
        str | None, typer.Option(help="Ray cluster address (or auto): encode passages there")
    ] = None,
) -> None:
    """Build an index (aside, then swapped in: an existing index is never left half-written)."""
    with friendly_errors():
        dense = DenseSettings(
            encoder=parse_encoder(encoder, embed_url, embed_batch),
            kind=index_type,
            shards=shards,
            nlist=nlist,
            nprobe=nprobe,
            ef_search=ef_search,
        )
        encode = None
        if ray:
            from ragteam.scale.ray_index import ray_encoder

            encode = ray_encoder(ray)
        manifest = build_with_progress(
            src,
            out_dir,
            retriever,
            passage_words,
            bm25_stemmer,
            dense=dense,
            mmap=mmap,
            encode=encode,
        )
        if manifest.get("replaced"):
            err.print(f"replaced the index that was in {out_dir}")
        out.print(
            f"indexed {manifest['passage_count']} passages from {manifest['document_count']} "
            f"documents into {out_dir} ({retriever}, {manifest['build_seconds']:.1f} s)"
        )


@index_app.command("info")
def index_info(directory: Annotated[Path, typer.Argument(help="index directory")]) -> None:
    """Show an index's manifest and whether it loads."""
    with friendly_errors():
        manifest = read_manifest(directory)
        out.print_json(json.dumps(manifest))
        load_index(directory)
        out.print("[green]index loads and matches its manifest[/]")


def build_with_progress(
    src: Path,
    directory: Path,
    retriever: str,
    words: int,
    stemmer: str = "english",
    **options: Any,
) -> dict[str, Any]:
    with LoggedProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        label="index build",
    ) as bar:
        tasks: dict[str, TaskID] = {}

        def report(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase, total=total)
            bar.update(tasks[phase], completed=done, total=total)

        return build_index(
            src,
            directory,
            retriever=retriever,
            passage_words=words,
            bm25_stemmer=stemmer,
            progress=report,
            **options,
        )
