"""/docs without a network: Swagger UI 5's files (Apache-2.0), as the installed
`fastapi-offline` package (MIT) ships them, served from here instead of FastAPI's default CDN,
which a machine offline cannot reach (the page stayed blank). Without the package, /docs says
how to get it."""

from __future__ import annotations

import mimetypes
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response

from ragteam.errors import UnknownName

ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css", "favicon.png")


def _bundle() -> Path | None:
    try:
        import fastapi_offline
    except ImportError:
        return None
    return Path(fastapi_offline.__file__).parent / "static"


def add_docs_routes(app: FastAPI) -> None:
    """`app` must be created with docs_url=None (FastAPI's CDN page)."""

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        if _bundle() is None:
            return HTMLResponse(
                "<p>The API reference needs Swagger UI's files: "
                "<code>pip install 'ragteam[server]'</code> (fastapi-offline). "
                'The schema itself is at <a href="/openapi.json">/openapi.json</a>.</p>',
                status_code=503,
            )
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title="ragteam API",
            swagger_js_url="/docs-assets/swagger-ui-bundle.js",
            swagger_css_url="/docs-assets/swagger-ui.css",
            swagger_favicon_url="/docs-assets/favicon.png",
        )

    @app.get("/docs-assets/{name}", include_in_schema=False)
    def asset(name: str) -> Response:
        folder = _bundle()
        if name not in ASSETS or folder is None:
            raise UnknownName("docs asset", name, list(ASSETS))
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        return Response((folder / name).read_bytes(), media_type=kind)
