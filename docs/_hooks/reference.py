"""MkDocs hook: the CLI and HTTP API reference pages, generated at build time from the code
(typer's click commands and FastAPI's OpenAPI schema), never written by hand."""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import File, Files


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, "reference/cli.md", content=cli_reference()))
    files.append(File.generated(config, "reference/http.md", content=http_reference()))
    return files


def cli_reference() -> str:
    import typer

    from ragteam.cli import app

    root = typer.main.get_command(app)
    out = [
        "# Command line reference",
        "",
        "Generated from the commands themselves (`ragteam COMMAND --help` says the same).",
        "",
    ]

    def walk(command: Any, path: list[str]) -> None:
        if hasattr(command, "commands"):  # a group (typer's own click)
            for name in sorted(command.commands):
                walk(command.commands[name], [*path, name])
            return
        if getattr(command, "hidden", False):
            return
        out.extend([f"## `{' '.join(path)}`", "", _help(command.help), ""])
        rows = [_param_row(p) for p in command.params if not getattr(p, "hidden", False)]
        if rows:
            out.extend(["| argument or option | type | default | what it does |", "|---" * 4 + "|"])
            out.extend(rows)
            out.append("")

    walk(root, ["ragteam"])
    return "\n".join(out) + "\n"


def _help(text: str | None) -> str:
    return " ".join((text or "").split("\b")[0].split()) or "(no description)"


def _param_row(param: Any) -> str:
    names = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts]) or f"`{param.name}`"
    if param.param_type_name == "argument":
        names = f"`{param.name.upper()}`"
    kind = param.bare_type()
    default = param.default
    shown = "" if default is None or callable(default) or default in ((), []) else f"`{default}`"
    said = " ".join(str(getattr(param, "help", "") or "").split()).replace("|", "\\|")
    return f"| {names} | {kind} | {shown} | {said} |"


def http_reference() -> str:
    from ragteam.server import ServerConfig, create_app

    spec = create_app(ServerConfig(indexes={}), clean=False).openapi()
    out = [
        "# HTTP API reference",
        "",
        "Generated from the server's OpenAPI schema (`ragteam serve` also serves it at "
        "`/openapi.json`, and a browsable copy at `/docs`).",
        "",
    ]
    for path, methods in spec["paths"].items():
        for method, operation in methods.items():
            out.extend(_operation(f"{method.upper()} {path}", operation))
    out.extend(["## Request bodies", ""])
    for name, schema in sorted(spec.get("components", {}).get("schemas", {}).items()):
        if schema.get("properties") and not name.endswith("Error"):
            out.extend(_schema(name, schema))
    return "\n".join(out) + "\n"


def _operation(route: str, operation: dict[str, Any]) -> list[str]:
    said = operation.get("description") or operation.get("summary") or ""
    out = [f"## `{route}`", "", " ".join(said.split()), ""]
    params = operation.get("parameters", [])
    if params:
        out.extend(["| parameter | in | required | type |", "|---|---|---|---|"])
        for p in params:
            kind = p.get("schema", {}).get("type", "")
            out.append(f"| `{p['name']}` | {p['in']} | {p.get('required', False)} | {kind} |")
        out.append("")
    for media, content in operation.get("requestBody", {}).get("content", {}).items():
        ref = content.get("schema", {}).get("$ref", "").rsplit("/", 1)[-1]
        out.extend([f"Body: `{media}`" + (f", schema `{ref}`" if ref else ""), ""])
    return out


def _schema(name: str, schema: dict[str, Any]) -> list[str]:
    out = [f"### `{name}`", "", " ".join((schema.get("description") or "").split()), ""]
    out.extend(["| field | type | default | what it is |", "|---|---|---|---|"])
    for field, facts in schema["properties"].items():
        kind = facts.get("type") or " or ".join(
            a.get("type", a.get("$ref", "").rsplit("/", 1)[-1]) for a in facts.get("anyOf", [])
        )
        needed = "required" if field in schema.get("required", []) else "optional"
        default = f"`{facts['default']}`" if "default" in facts else needed
        said = " ".join(str(facts.get("description", "")).split()).replace("|", "\\|")
        out.append(f"| `{field}` | {kind} | {default} | {said} |")
    return [*out, ""]
