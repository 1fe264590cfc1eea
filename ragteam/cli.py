"""ragteam: answer questions over your own documents with teams of LLM agents.

A thin layer over the Python API (`ragteam.answer`, `ragteam.retrieval`, `ragteam.eval`)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from ragteam._version import __version__
from ragteam.asking import AskRequest
from ragteam.asking.api import answer
from ragteam.asking.where import Where
from ragteam.commands.cache import cache_app
from ragteam.commands.common import (
    McpOpt,
    ToolsOpt,
    err,
    friendly_errors,
    live_answer,
    log_to_stderr,
    out,
    shown,
    user_tools,
)
from ragteam.commands.eval import eval_command, report_command
from ragteam.commands.flags import with_settings
from ragteam.commands.index import build_with_progress, index_app
from ragteam.commands.model_options import ModelOpt
from ragteam.commands.render import answer_view, trace_view
from ragteam.commands.router import feedback_command, router_app
from ragteam.commands.serve import mcp_command, serve_command
from ragteam.commands.train import train_app
from ragteam.errors import RagteamError
from ragteam.llm import DEFAULT_MODEL
from ragteam.retrieval.index import load_index
from ragteam.strategies import available
from ragteam.types import Retrieved

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)


def _show_version(value: bool) -> None:
    if value:
        out.print(f"ragteam {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_show_version, is_eager=True, help="print the version"),
    ] = False,
) -> None:
    """Answer knowledge-intensive questions with teams of LLM agents over your own documents."""
    log_to_stderr()


app.add_typer(index_app, name="index")

StrategyOpt = Annotated[str, typer.Option("--strategy", "-s", help="strategy name")]


@app.command()
@with_settings("where", Where)
@with_settings("request", AskRequest)
def ask(
    question: Annotated[str, typer.Argument(help="the question")],
    where: Where,
    request: AskRequest,
    as_json: Annotated[bool, typer.Option("--json", help="print the answer as JSON")] = False,
    show_trace: Annotated[bool, typer.Option("--trace", help="show every agent step")] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="exit 3 when no model reply could be parsed")
    ] = False,
    tools: ToolsOpt = [],  # noqa: B006
    mcp: McpOpt = [],  # noqa: B006
    follow: Annotated[
        Path | None,
        typer.Option(
            help="a conversation file: the question may follow up on its turns (asked as the "
            "question it means), and is kept there as the next turn (made if missing)"
        ),
    ] = None,
) -> None:
    """Answer a question over an index; the answer cites, sentence by sentence, the passages
    that support it, and says when none does. With --claim the answer is true or false, with
    --choice an option's label, and says why. (The answer options are `ragteam.AskRequest`'s.)"""
    from ragteam.asking.conversation import Conversation

    with friendly_errors(), user_tools(tools, mcp, where.model_options.timeout) as extra:
        talk = Conversation.load(follow) if follow is not None else Conversation()
        asked_where = replace(where, tools=tuple(extra)).given()
        with live_answer(request.strategy) as (on_step, on_writing):
            result = talk.ask(
                question, request, **asked_where, on_step=on_step, on_writing=on_writing
            )
        if follow is not None:
            talk.save(follow)
            if talk.turns[-1].answered_as != talk.turns[-1].question:
                err.print(f"answered as: {talk.turns[-1].answered_as}", highlight=False)
        _print_answer(result, as_json, show_trace)
        _warn_unparsed(result, strict)


def _print_answer(result: Any, as_json: bool, show_trace: bool) -> None:
    if as_json:
        payload = result.to_dict()
        if not show_trace:
            payload.pop("trace")
        out.print_json(json.dumps(payload, ensure_ascii=False, default=str))
        return
    out.print(answer_view(result))
    if show_trace and result.trace:
        out.print(trace_view(result.trace))


def _warn_unparsed(result: Any, strict: bool) -> None:
    """Say so when every model reply failed to parse (the answer is a fallback, not a reading)."""
    calls = result.work.model_calls
    if calls and result.work.model_calls_unparsed == calls:
        err.print(
            f"[yellow]warning:[/] all {calls} model replies failed to parse; the answer is "
            "a fallback. See --trace, or try a larger model (--model)."
        )
        if strict:
            raise typer.Exit(3)


@app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="what to look for")],
    index: Annotated[Path, typer.Option(help="index directory")],
    k: Annotated[int, typer.Option("-k", min=1, max=100, help="how many passages")] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="a JSON list of hits")] = False,
) -> None:
    """Retrieval alone: the best passages for a query, each with where it stands (file, page,
    section, slide), as the MCP `search` tool returns them."""

    from ragteam.types import hit_dict

    with friendly_errors():
        if not query.strip():
            raise RagteamError("the query is empty; pass the words to look for")
        hits = [hit_dict(p) for p in load_index(index).retrieve(query, k)]
        if as_json:
            out.print_json(json.dumps(hits, ensure_ascii=False))
            return
        for n, hit in enumerate(hits, start=1):
            where = hit["locator"] or hit["title"]
            out.print(
                f"[bold]{n}. {shown(where)}[/]  [dim]{shown(hit['id'])} "
                f"score {hit['score']:.3f}[/]",
                highlight=False,
            )
            out.print("   " + shown(" ".join(hit["text"].split())[:300]), highlight=False)
        if not hits:
            out.print("no passage matches")


@app.command()
def demo(
    question: Annotated[str | None, typer.Option(help="ask this instead of the sample")] = None,
    # the demo shows multi-hop retrieval step by step: IRCoT searches again with each sentence
    strategy: StrategyOpt = "ircot",
    model: ModelOpt = DEFAULT_MODEL,
    rebuild: Annotated[bool, typer.Option(help="rebuild the demo index")] = False,
) -> None:
    """Index the bundled demo corpus (once) and answer a sample question, trace shown."""
    from ragteam.commands.demo import DEMO_QUESTION, demo_corpus_path, demo_index_dir

    with friendly_errors():
        directory = demo_index_dir()
        if rebuild or not _loads(directory):
            out.print(f"building the demo index in {directory} ...")
            build_with_progress(demo_corpus_path(), directory, "hybrid", 100)
        asked = question or DEMO_QUESTION
        out.print(f"[bold]question:[/] {asked}")
        result = answer(asked, index=directory, strategy=strategy, model=model)
        out.print(answer_view(result))
        if result.trace:
            out.print("[bold]how the answer was found:[/]")
            out.print(trace_view(result.trace))


@app.command("tools")
def list_tools(
    index: Annotated[Path | None, typer.Option(help="index for search and lookup")] = None,
    tools: ToolsOpt = [],  # noqa: B006
    mcp: McpOpt = [],  # noqa: B006
) -> None:
    """List the tools an agent can call: built-in, installed, --tools and --mcp ones."""
    from ragteam.tools import general_tools, index_tools
    from ragteam.trace import Trace

    with friendly_errors(), user_tools(tools, mcp) as extra:
        loaded = load_index(index) if index else None
        builtin = index_tools(loaded, Trace(), Retrieved()) if loaded else []
        for found in [*builtin, *general_tools(), *extra]:
            args = json.dumps(found.parameters.get("properties", {}), ensure_ascii=False)
            out.print(
                f"[bold]{found.name}[/]  {found.description}\n    arguments: {args}",
                highlight=False,
            )
        if not loaded:
            out.print("search, lookup: over an index (--index DIR; always there with one)")


@app.command("strategies")
def list_strategies() -> None:
    """List the registered strategies with their agent roles and options."""
    from ragteam.strategies import strategy_class, strategy_options, strategy_roles

    for name in available():
        roles = ", ".join(strategy_roles(name)) or "-"
        options = ", ".join(
            f"{key}={default!r} ({kind})" for key, (kind, default) in strategy_options(name).items()
        )
        about = getattr(strategy_class(name), "describe", None)
        note = f"\n    {about()}" if callable(about) else ""
        out.print(
            f"[bold]{name}[/]  roles: {roles}\n    options: {options or '-'}{note}",
            highlight=False,
        )


def _loads(directory: Path) -> bool:
    try:
        load_index(directory)
    except RagteamError:
        return False
    return True


app.command("eval")(eval_command)
app.command("report")(report_command)
app.command("feedback")(feedback_command)
app.command("serve")(serve_command)
app.command("mcp")(mcp_command)
app.add_typer(router_app, name="router")
app.add_typer(train_app, name="train")
app.add_typer(cache_app, name="cache")

if __name__ == "__main__":  # pragma: no cover
    app()
