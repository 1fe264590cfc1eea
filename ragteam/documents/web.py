"""Web pages: trafilatura keeps a page's main content (tables kept) as Markdown, which the
Markdown reader then splits on headings; `html=whole` keeps every text of the page instead
(lxml), for documentation sites where boilerplate removal would drop content. A page whose
main content comes out nearly empty, or without most of the page's own headings (DocBook
wraps each in nested `div`s, which trafilatura drops), is read whole, with a note: the
headings are what citations name. Only the page's own `h1`-`h6` are headings: a `#` line
of the extracted text (a shell comment in a `<pre>`) stays text. A page's text is read as it
stands (`&lt;Return&gt;` is the text `<Return>`, a `*` is a star), and what is hidden from a
screen reader (`aria-hidden`) or only links a heading to itself (Sphinx's "¶") is furniture,
not words."""

from __future__ import annotations

import codecs
import re
from pathlib import Path
from typing import Any, ClassVar

from ragteam.documents.base import ConversionFailed, Converted, ConvertSettings, Unit
from ragteam.documents.tables import table_lines
from ragteam.documents.text import markdown_units

_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_HEADING_LINE = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ #\t]*$")
HEADINGS_KEPT = 0.5  # share of the page's headings the main content must keep
_LEVELS = ("h1", "h2", "h3", "h4", "h5", "h6")
MAX_MAIN_DEPTH = 500  # deeper pages are read whole: main-content search drops their depths
MAX_MAIN_BYTES = 8 * 1024 * 1024  # larger pages are read whole: main-content search is slow
# libxml2's HTML parser nests at most about this many elements, even with huge_tree: what
# stands deeper is not in its tree, so a page that reaches it is read by a flat parser
PARSER_DEPTH = 2040
_SKIP = {"script", "style", "noscript", "template", "svg", "head"}
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII mark Markdown could read
_INLINE = {
    "a",
    "abbr",
    "b",
    "bdi",
    "br",
    "cite",
    "code",
    "data",
    "em",
    "i",
    "img",
    "kbd",
    "label",
    "mark",
    "q",
    "s",
    "samp",
    "small",
    "span",
    "strong",
    "sub",
    "sup",
    "time",
    "u",
    "var",
    "wbr",
}


def _decode(path: Path) -> str:
    """The page's characters; a file with a NUL byte in its first 8 KB (and no UTF-16
    byte-order mark) is binary, as a text file is (never indexed as replacement characters)."""
    data = path.read_bytes()
    if not data.strip(b" \t\r\n\x00"):
        raise ConversionFailed("the file is empty" if b"\0" not in data else "binary, not HTML")
    head = data[:8192]
    if b"\0" in head and not head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise ConversionFailed(
            f"binary, not HTML, though it is named {path.suffix}; rename or move it"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        from charset_normalizer import from_bytes

        best = from_bytes(data[:1_000_000]).best()
        return data.decode(best.encoding if best else "latin-1", errors="replace")


def _tree(html: str) -> Any:
    """The page parsed for trafilatura without lxml's depth limit of 255 (the text of a deeper
    page would be lost); the text itself when it does not parse (trafilatura says why)."""
    import lxml.html

    try:
        return lxml.html.document_fromstring(
            _XML_DECLARATION.sub("", html, count=1), parser=lxml.html.HTMLParser(huge_tree=True)
        )
    except (ValueError, lxml.etree.ParserError):
        return html


def whole_page(html: str, records: bool = False, root: Any = None) -> tuple[str, list[Unit]]:
    """Every visible text of the page, headings kept as Markdown headings, then read by the
    Markdown reader (so sections and stripping are one code path); `root`: the page already
    parsed by `_tree` and not yet changed (else it is parsed here)."""
    import lxml.html

    if root is None:
        html = _XML_DECLARATION.sub("", html, count=1)  # XHTML: lxml refuses str with one
        try:
            # huge_tree: without it lxml stops at depth 255 and the deeper text is lost
            parser = lxml.html.HTMLParser(huge_tree=True)
            root = lxml.html.document_fromstring(html, parser=parser)
        except (ValueError, lxml.etree.ParserError) as exc:
            raise ConversionFailed(f"not readable HTML ({exc})") from exc
    title = " ".join((root.findtext(".//title") or "").split())
    lines: list[str] = []
    drop_furniture(root)
    _walk(root.find("body") if root.find("body") is not None else root, lines, records)
    page_title, units = markdown_units("\n\n".join(lines), records)
    return title or page_title, units


def _walk(root: Any, lines: list[str], records: bool = False) -> None:
    """Headings as `#` lines, a table's rows as lines (`cell | cell`, or records), `<pre>` as
    fenced code, every other
    element holding no block-level child as one paragraph; text between blocks is kept too.
    Iterative (a stack, not recursion): a page nested thousands of levels deep is read."""
    stack: list[tuple[str, Any]] = [("node", root)]
    while stack:
        kind, item = stack.pop()
        if kind == "text":
            _add(lines, item)
            continue
        children = _element_lines(item, lines, records)
        stack.extend(reversed(children))


def _element_lines(element: Any, lines: list[str], records: bool) -> list[tuple[str, Any]]:
    """Add what `element` says by itself to `lines`; what is left to walk of it, in order
    (its text, its block children, their tails)."""
    tag = element.tag if isinstance(element.tag, str) else ""
    if tag in _SKIP or not tag:
        return []
    if len(tag) == 2 and tag[0] == "h" and tag[1].isdigit():
        _add(lines, element.text_content(), "#" * int(tag[1]) + " ")
        return []
    if tag == "pre":  # code keeps its lines (and a `#` comment line stays text)
        code = element.text_content().strip("\n")
        if code.strip():
            fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", code)), default=0))
            lines.append(f"{fence}\n{code}\n{fence}")
        return []
    if tag == "tr":  # a row a line, `cell | cell`
        cells = [" ".join(c.text_content().split()) for c in element if c.tag in ("td", "th")]
        if any(cells):
            lines.append(literal(" | ".join(c.replace("|", "/") for c in cells)))
        return []
    if tag == "table" and records:  # a row a line: a record by its header row's names
        rows = [r for r in element.iter("tr") if next(r.iterancestors("table"), None) is element]
        cells = [[c.text_content() for c in r if c.tag in ("td", "th")] for r in rows]
        headed = bool(rows) and all(c.tag == "th" for c in rows[0] if isinstance(c.tag, str))
        found = table_lines(cells[0], cells[1:]) if headed else table_lines(None, cells)
        lines.extend(literal(line) for line in found)
        return []
    blocks = [c for c in element if isinstance(c.tag, str) and c.tag not in _INLINE]
    if not blocks:
        _add(lines, element.text_content())
        return []
    todo: list[tuple[str, Any]] = [("text", element.text or "")]
    for child in element:
        if isinstance(child.tag, str) and child.tag in _INLINE:
            todo.append(("text", child.text_content()))
        else:
            todo.append(("node", child))
        todo.append(("text", child.tail or ""))
    return todo


def _add(lines: list[str], text: str, prefix: str = "") -> None:
    words = " ".join(text.split())
    if words:  # the Markdown reader reads it as the text it is (no heading, tag or emphasis)
        lines.append(prefix + literal(words))


def literal(text: str) -> str:
    """`text` escaped so that Markdown reads it as it is: `<Return>` is no HTML tag, `*x*` no
    emphasis, a leading `#` or `-` no heading or list, `&amp;` no entity."""
    return _PUNCTUATION.sub(r"\\\1", text)


def drop_furniture(root: Any) -> None:
    """Remove from a parsed page what is no text of it: what is hidden from a screen reader
    (`aria-hidden="true"`: icons, a heading's "#" and "TOC" links) and a heading's link to
    itself that says no word (Sphinx's "¶" permalink)."""
    hidden = [e for e in root.iter() if isinstance(e.tag, str) and e.get("aria-hidden") == "true"]
    for heading in root.iter(*_LEVELS):
        hidden += [
            a
            for a in heading.iter("a")
            if (a.get("href") or "").startswith("#") and not re.search(r"\w", a.text_content())
        ]
    for element in hidden:
        if element.getparent() is not None:
            element.drop_tree()  # its tail (the text after it) stays


class HtmlConverter:
    name: ClassVar[str] = "html"
    # 2: pages nested deeper than 255 levels read whole; 3: a page's own headings kept;
    # 4-5: a table's rows as records by its header row when asked, pages of any depth read;
    # 6: a whole page's text read literally (`<Return>` kept), furniture links dropped, a page
    # whose main content lost its tables' rows read whole
    # 7: a page nested past the HTML parser's depth read flat (its deeper text was lost)
    version: ClassVar[str] = "7"
    suffixes: ClassVar[tuple[str, ...]] = (".html", ".htm", ".xhtml")
    max_mb: ClassVar[int] = 50  # larger files are skipped, never read
    isolated: ClassVar[bool] = True

    def convert(self, path: Path, settings: ConvertSettings) -> Converted:
        html = _decode(path)
        records = settings.records
        tree = _tree(html)
        if (depth := _depth(tree)) >= PARSER_DEPTH:  # the tree lost what is deeper
            title, units = flat_page(html, records)
            note = (
                f"nested more than {PARSER_DEPTH} levels deep, past what the HTML parser keeps: "
                "read as plain text (headings and table rows as lines)"
            )
            return Converted(title, units, [note])
        if settings.html == "whole" or len(html) > MAX_MAIN_BYTES:  # the tree parsed once
            title, units = whole_page(html, records, None if isinstance(tree, str) else tree)
            notes = (
                []
                if settings.html == "whole"
                else [
                    f"{len(html) / 2**20:.0f} MB page: read whole, without main-content extraction"
                ]
            )
            return Converted(title, units, notes)
        if not isinstance(tree, str):
            drop_furniture(tree)
        if depth > MAX_MAIN_DEPTH:  # main-content search cuts deep pages
            title, units = whole_page(html, records)
            note = f"nested {depth} levels deep: read whole, without main-content extraction"
            return Converted(title, units, [note])
        own = page_headings(tree)  # read before trafilatura, which cleans the tree it is given
        extracted = main_content(tree)
        title, whole = whole_page(html, records)
        whole_chars = sum(len(u.text) for u in whole)
        if not extracted or len(extracted) < 0.1 * whole_chars:
            note = "main content not found: the whole page was read (`--html whole` says so)"
            return Converted(title, whole, [note] if whole else [])
        extracted, kept = own_headings(extracted, own)
        if len(own) >= 3 and kept < HEADINGS_KEPT * len(own):
            note = (
                f"main-content extraction kept {kept} of the page's {len(own)} headings: "
                "the whole page was read, so that citations name their sections"
            )
            return Converted(title, whole, [note])
        if _has_data_table(tree) and not re.search(r"^\|.*\|\s*$", extracted, re.M):
            note = "main-content extraction kept no table's rows: the whole page was read"
            return Converted(title, whole, [note])
        main_title, units = markdown_units(extracted, records)
        return Converted(title or main_title, units)


_BREAKS = {
    "p",
    "div",
    "br",
    "li",
    "tr",
    "table",
    "section",
    "article",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "title",
}
_UNSEEN = {"script", "style", "template", "noscript"}


def flat_page(html: str, records: bool = False) -> tuple[str, list[Unit]]:
    """The page's text read by a streaming parser that keeps no tree (so no depth limit):
    a line break at each block, `#` before a heading's text, ` | ` between a row's cells,
    then read by the Markdown reader."""
    from html.parser import HTMLParser

    parts: list[str] = []
    title: list[str] = []
    state = {"unseen": 0, "title": False}

    class Flat(HTMLParser):
        def handle_starttag(self, tag: str, attrs: Any) -> None:
            if tag in _UNSEEN:
                state["unseen"] += 1
            if tag in _BREAKS:
                parts.append("\n\n")
            if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
                parts.append("#" * int(tag[1]) + " ")
            state["title"] = state["title"] or tag == "title"

        def handle_endtag(self, tag: str) -> None:
            if tag in _UNSEEN:
                state["unseen"] = max(0, state["unseen"] - 1)
            if tag in ("td", "th"):
                parts.append(" | ")
            if tag == "title":
                state["title"] = False
            if tag in _BREAKS:
                parts.append("\n\n")

        def handle_data(self, data: str) -> None:
            if state["title"]:
                title.append(data)
            elif not state["unseen"]:
                parts.append(" ".join(data.split()) + " " if data.strip() else "")

    reader = Flat(convert_charrefs=True)
    reader.feed(html)
    reader.close()
    text = "\n".join(line.strip().strip("|").strip() for line in "".join(parts).split("\n"))
    page_title, units = markdown_units(text, records)
    return " ".join("".join(title).split()) or page_title, units


def _has_data_table(tree: Any) -> bool:
    """Whether the parsed page holds a table of at least two rows of two cells or more (what
    main-content extraction must keep as rows: its fallback writes each cell on a line)."""
    for table in tree.iter("table"):
        rows = [r for r in table.iter("tr") if sum(c.tag in ("td", "th") for c in r) >= 2]
        if len(rows) >= 2:
            return True
    return False


def _depth(tree: Any) -> int:
    """How deep the parsed page's elements nest (0 for a page that did not parse)."""
    if isinstance(tree, str):
        return 0
    deepest, stack = 0, [(tree, 1)]
    while stack:
        element, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in element)
    return deepest


def page_headings(tree: Any) -> set[str]:
    """The words of each of the page's own headings (`h1`-`h6`) in the parsed page `tree`
    (none when the page did not parse: `_tree` then hands back its text)."""
    if isinstance(tree, str):
        return set()
    return {_plain(h.text_content()) for h in tree.iter(*_LEVELS)} - {""}


def _plain(text: str) -> str:
    """A heading's words, compared without Markdown's marks and escapes."""
    return " ".join(re.sub(r"[*_`\\]", "", text).split())


def own_headings(markdown: str, own: set[str]) -> tuple[str, int]:
    """`markdown` with every heading line that is not one of the page's own headings escaped
    (it is text: a comment line of a code block; fenced code is left as it is), and how many
    of the page's headings it keeps."""
    kept: set[str] = set()
    lines, fenced = [], False
    for line in markdown.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (match := _HEADING_LINE.match(line)):
            words = _plain(match.group(2))
            if words in own:
                kept.add(words)
            else:
                line = "\\" + line
        lines.append(line)
    return "\n".join(lines), len(kept)


def main_content(tree: Any) -> str:
    """trafilatura's main content of a parsed page, as Markdown ("" when it finds none)."""
    import trafilatura

    extracted = trafilatura.extract(
        tree,
        output_format="markdown",
        include_tables=True,
        include_comments=False,
        include_formatting=True,
        favor_recall=True,
        with_metadata=False,
    )
    return extracted or ""
