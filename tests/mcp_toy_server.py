"""A tiny MCP server over stdio for the tests: facts about the fictional demo archipelago."""

from __future__ import annotations

import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("archipelago")

BIRTHPLACES = {"emrik tollan": "Hevik", "piet anvers": "Dunmere", "edvin sorle": "Orlen"}


@server.tool()
def birthplace(person: str) -> str:
    """The village where a person of the archipelago was born."""
    return BIRTHPLACES.get(person.lower().strip(), f"no record of {person}")


@server.tool()
def broken(reason: str) -> str:
    """Always fails (to test errors)."""
    raise ValueError(f"broken on purpose: {reason}")


@server.tool()
def slow(seconds: float) -> str:
    """Sleeps, then answers (to test timeouts)."""
    time.sleep(seconds)
    return "awake"


if __name__ == "__main__":
    server.run()
