"""The import graph of ragteam's modules has no cycles (function-local imports included): every
module can be read knowing only what it imports."""

from __future__ import annotations

import pytest

grimp = pytest.importorskip("grimp")


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_cycle_finder_finds_a_loop():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_loop_back_to_itself():
    graph = grimp.build_graph("ragteam")
    edges = {
        m: {i for i in graph.find_modules_directly_imported_by(m) if i.startswith("ragteam")}
        for m in graph.modules
    }
    assert _cycles(edges) == []


def test_folders_do_not_import_each_other_in_a_loop():
    """Folders read top-down too: a loop between two subpackages (e.g. retrieval -> a CLI
    helper -> tools -> retrieval) is found here; top-level modules count as their own folder."""
    graph = grimp.build_graph("ragteam")

    def folder(module: str) -> str:
        return ".".join(module.split(".")[:2])

    edges: dict[str, set[str]] = {}
    for m in graph.modules:
        for i in graph.find_modules_directly_imported_by(m):
            if i.startswith("ragteam") and folder(i) != folder(m):
                edges.setdefault(folder(m), set()).add(folder(i))
    assert _cycles(edges) == []


def test_importing_a_small_module_does_not_load_the_package():
    """The package `__init__` is lazy: `import ragteam.common.metrics` loads no model, strategy or
    API code; `ragteam.answer` still works on first use."""
    import subprocess
    import sys

    code = (
        "import sys, ragteam.common.metrics\n"
        "print(sorted(m for m in sys.modules if m.startswith('ragteam')))\n"
        "import ragteam\n"
        "assert callable(ragteam.answer) and issubclass(ragteam.InputError, ragteam.RagteamError)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = "['ragteam', 'ragteam._version', 'ragteam.common', 'ragteam.common.metrics']"
    assert out.stdout.strip() == loaded


def test_the_graph_sees_every_module():
    """A folder without `__init__.py` is a namespace package that grimp leaves out, and a
    guard that cannot see a folder cannot fail on it: every .py file is in the graph."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "ragteam"
    on_disk = {
        ".".join(("ragteam", *p.relative_to(root).with_suffix("").parts)).removesuffix(".__init__")
        for p in root.rglob("*.py")
    }
    assert on_disk - set(grimp.build_graph("ragteam").modules) == set()
