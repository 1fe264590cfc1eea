"""Web pages' sections: how many a page's passages name, read by the HTML converter, against
trafilatura's main content split on its own Markdown headings (the converter before version
3), beside the page's own h1-h6 count. docs/benchmarks.md §34.

    python bench/html_sections.py FILE_OR_FOLDER [...]

For Debian's documents: `apt-get download debian-reference-en sqlite3-doc`, `dpkg -x` each,
then pass `usr/share/debian-reference` (the `*.en.html` chapters) or single pages."""

from __future__ import annotations

import argparse
from pathlib import Path

from ragteam.documents.base import ConvertSettings
from ragteam.documents.text import markdown_units
from ragteam.documents.web import HtmlConverter, _decode, _tree, main_content, page_headings


def main_content_sections(path: Path) -> int:
    """Sections of trafilatura's main content as the converter read it before version 3."""
    return len({u.where.section for u in markdown_units(main_content(_tree(_decode(path))))[1]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", type=Path, nargs="+")
    args = parser.parse_args()
    files = [
        f
        for p in args.paths
        for f in (sorted(p.glob("*.htm*")) if p.is_dir() else [p])
        if f.suffix.lower() in (".html", ".htm")
    ]
    totals = [0, 0, 0]
    print("| page | own headings | sections before (main content) | sections now |")
    print("|---|---|---|---|")
    for f in files:
        own = len(page_headings(_tree(_decode(f))))
        before = main_content_sections(f)
        now = len({u.where.section for u in HtmlConverter().convert(f, ConvertSettings()).units})
        totals = [totals[0] + own, totals[1] + before, totals[2] + now]
        print(f"| {f.name} | {own} | {before} | {now} |")
    print(f"| all {len(files)} | {totals[0]} | {totals[1]} | {totals[2]} |")


if __name__ == "__main__":
    main()
