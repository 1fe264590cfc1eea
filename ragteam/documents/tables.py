"""A table's rows as the reader reads them: each row one line of `Header: cell` pairs, so that
a cell comes with the name of its column whatever words a question uses for it
(`Option: -q | Meaning: quiet mode | Default: off`). Rows of a table without a header row stay
`cell | cell`."""

from __future__ import annotations

MAX_HEADER = 80  # characters of a header cell kept in each row's record


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "/").split())


def record(header: list[str], cells: list[str]) -> str:
    """One row as `Header: cell | ...`: a cell under an empty header, or past the header's
    last column (a row with more cells than its header), stands alone; empty cells are left
    out."""
    parts = []
    for n, cell in enumerate(cells):
        value = _cell(cell)
        if not value:
            continue
        name = _cell(header[n])[:MAX_HEADER] if n < len(header) else ""
        parts.append(f"{name}: {value}" if name and name != value else value)
    return " | ".join(parts)


def table_lines(header: list[str] | None, rows: list[list[str]]) -> list[str]:
    """A table's lines: its header row's cells as they are, then each row as a record (no
    header: each row's cells joined by ` | `); rows without text left out."""
    named = header is not None and any(_cell(h) for h in header)
    lines = [" | ".join(_cell(h) for h in header)] if named and header else []
    for cells in rows:
        line = record(header, cells) if named and header else " | ".join(map(_cell, cells))
        if line.strip(" |"):
            lines.append(line)
    return lines
