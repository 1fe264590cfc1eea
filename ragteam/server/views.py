"""Read-only routes: strategies, indexes, passages, eval runs."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Query
from fastapi.responses import Response
from starlette.convertors import Convertor, register_url_convertor

from ragteam.errors import UnknownName
from ragteam.eval.report import Table
from ragteam.server.redact import redact_all, redact_paths
from ragteam.server.service import Service
from ragteam.server.words import with_words

MAX_AROUND = 3  # passages before and after a cited one that a client may ask for


class AnyPath(Convertor[str]):
    """A path that may hold any character, a newline too (Starlette's `path` stops at one):
    a file named with one is a passage id that must stay reachable."""

    regex = r"[\s\S]*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("any", AnyPath())


def add_read_routes(app: FastAPI, service: Service, auth: list[Any]) -> None:
    """Strategies, indexes and passages; eval runs (`add_run_routes`)."""
    _add_index_routes(app, service, auth)
    _add_passage_route(app, service, auth)
    add_run_routes(app, service, auth)


def _add_index_routes(app: FastAPI, service: Service, auth: list[Any]) -> None:
    @app.get("/v1/strategies", dependencies=auth)
    def strategies() -> list[dict[str, Any]]:
        from ragteam.strategies import available

        return [strategy_info(service, name) for name in available()]

    @app.get("/v1/indexes", dependencies=auth)
    def indexes() -> list[dict[str, Any]]:
        found = []
        for name in service.config.indexes:
            try:
                manifest = service.manifest(name)
                found.append(
                    {
                        "name": name,
                        "retriever": manifest.retriever,
                        "passages": manifest.passage_count,
                        "ok": True,
                    }
                )
            except Exception as exc:  # listed, with the reason it cannot be used
                detail = redact_paths(str(exc), service.config)
                found.append({"name": name, "ok": False, "detail": detail})
        return found

    @app.post("/v1/indexes/{name}/sync", dependencies=auth)
    async def sync_index(name: str) -> dict[str, Any]:
        """Sync a served folder index from its folder; the next request answers from it."""
        if not service.config.api_key:
            raise HTTPException(
                403,
                "syncing a served index needs the server's key: start `ragteam serve` with "
                "--client-key-env NAME (or run `ragteam index sync` beside it)",
            )
        report = await asyncio.to_thread(service.sync, name)
        return redact_all(report, service.config)  # reasons name files by their full path

    @app.get("/v1/indexes/{name}", dependencies=auth)
    def index_manifest(name: str) -> dict[str, Any]:
        return service.public_manifest(name)

    @app.get("/v1/indexes/{name}/documents", dependencies=auth)
    def index_documents(name: str) -> dict[str, Any]:
        """Every file of a served folder index as its last sync left it: read (pages,
        passages), skipped or failed (why), notes, and a warning when a read file gave almost
        nothing. Paths are relative to the indexed folder."""
        return redact_all(service.documents(name), service.config)


def _add_passage_route(app: FastAPI, service: Service, auth: list[Any]) -> None:
    @app.get("/v1/passages/{index}/{passage_id:any}", dependencies=auth)
    def passage(
        index: str, passage_id: str, around: int = Query(0, ge=0, le=MAX_AROUND)
    ) -> dict[str, Any]:
        """A passage; with `around` N, also the N passages before and after it in its own
        document (`before`, `after`: what the viewer shows around the cited text); a slide's
        passage has only its own slide's around it (the slide's text and notes)."""
        loaded = service.index(index)
        found = loaded.passage(passage_id) if loaded else None
        if found is None:
            raise UnknownName("passage", passage_id, [])
        if not around:
            return found.to_dict()
        before, after = loaded.neighbours(passage_id, around)
        slide = found.locator.slide if found.locator else None
        if slide is not None:
            before, after = (
                [p for p in side if p.locator and p.locator.slide == slide]
                for side in (before, after)
            )
        return {
            **found.to_dict(),
            "before": [p.to_dict() for p in before],
            "after": [p.to_dict() for p in after],
        }


def add_run_routes(app: FastAPI, service: Service, auth: list[Any]) -> None:
    """Eval runs: their names, reports, question-by-question rows, traces and plots."""

    @app.get("/v1/runs", dependencies=auth)
    def runs() -> list[str]:
        return service.run_names()

    @app.get("/v1/runs/{name}", dependencies=auth)
    def run_report(name: str, baseline: str | None = None) -> dict[str, Any]:
        return run_summary(name, service.run_table(name), baseline, service.run_index(name))

    @app.get("/v1/runs/{name}/questions", dependencies=auth)
    def run_questions(name: str) -> dict[str, Any]:
        """Question by question: each strategy's prediction, scores and grounding (no
        traces: `/v1/runs/{name}/trace` has one)."""
        return question_rows(service.run_table(name))

    @app.get("/v1/runs/{name}/trace", dependencies=auth)
    def run_trace(name: str, label: str, id: str) -> dict[str, Any]:  # noqa: A002 - the row id
        table = service.run_table(name)
        if label not in table:
            raise UnknownName("strategy in this run", label, list(table))
        if id not in table[label]:
            raise UnknownName("question in this run", id, list(table[label])[:20])
        trace = table[label][id].trace or {"steps": []}
        return {**trace, "steps": [with_words(s) for s in trace.get("steps", [])]}

    @app.get("/v1/runs/{name}/plot.png", dependencies=auth)
    def run_plot(name: str) -> Response:
        from ragteam.eval.report import plot

        table = service.run_table(name)
        with tempfile.TemporaryDirectory() as tmp:
            path = plot(table, Path(tmp) / "plot.png")
            return Response(path.read_bytes(), media_type="image/png")


def run_summary(
    name: str, table: Table, baseline: str | None, index: str | None = None
) -> dict[str, Any]:
    """A run's report: per strategy its means (with intervals) and per-question scores, the
    markdown tables `ragteam report` prints, and the served index its passages open in."""
    from ragteam.eval.report import render_markdown, summarize

    summaries = [summarize(label, list(rows.values())) for label, rows in table.items()]
    return {
        "name": name,
        "index": index,
        "strategies": [
            {
                "label": s.label,
                "n": s.n,
                "means": {k: list(v) for k, v in s.means.items()},
                "per_question": s.per_question,
                "errors": s.errors,
            }
            for s in summaries
        ],
        "markdown": render_markdown(table, baseline),
    }


def strategy_info(service: Service, name: str) -> dict[str, Any]:
    """What the page shows of a strategy: roles, options, a one-line description, whether it
    needs an index, and why it cannot answer here ('' when it can)."""
    from ragteam.strategies import (
        DEFAULT_STRATEGY,
        strategy_class,
        strategy_options,
        strategy_roles,
    )

    kind = strategy_class(name)
    describe = getattr(kind, "describe", None)
    doc = (kind.__doc__ or "").strip().split("\n\n")[0]
    if doc.startswith(f"{kind.__name__}("):  # a dataclass's generated signature: no help
        doc = ""
    unavailable = getattr(kind, "unavailable", None)
    return {
        "name": name,
        "roles": list(strategy_roles(name)),
        "options": {
            key: {"type": kind_, "default": default}
            for key, (kind_, default) in strategy_options(name).items()
        },
        "description": " ".join(doc.split()),
        "detail": describe() if callable(describe) else "",
        "default": name == DEFAULT_STRATEGY,
        "needs_index": kind.needs_index,
        "unavailable": unavailable(service.options_for(name)) if callable(unavailable) else "",
    }


def question_rows(table: Table) -> dict[str, Any]:
    """{labels, questions: [{id, question, answers, by: {label: outcome}}]} in first-seen
    order; a question some strategy did not answer has no entry for it."""
    order: dict[str, dict[str, Any]] = {}
    for label, rows in table.items():
        for qid, row in rows.items():
            entry = order.setdefault(
                qid, {"id": qid, "question": row.question, "answers": row.answers}
            )
            entry.setdefault("by", {})[label] = {
                "prediction": row.prediction,
                "metrics": row.metrics,
                "grounding": row.grounding,
                "error": row.error,
                "seconds": row.wall_seconds,
            }
    return {"labels": list(table), "questions": list(order.values())}
