"""No import cycles among gpuaas modules.

Every module under gpuaas/ is parsed (not imported) and every import of a gpuaas module is an
edge: at module level and inside functions alike (an import deferred into a function still
ties the two modules together), relative imports resolved, ``from gpuaas.x import y`` counted
as importing gpuaas.x.y when y is a submodule, a package's ``__init__`` being the module named
for the package. Only imports under ``if TYPE_CHECKING:`` are left out: they never run.
Cycles are found by Tarjan's strongly connected components; each one is printed.
"""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "gpuaas"


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> source file, for every module of the package."""
    mods = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of a module, except those under ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _owner(name: str, mods: dict[str, Path]) -> str | None:
    """The longest gpuaas module that `name` is or lies in (``gpuaas.x.f`` -> ``gpuaas.x``)."""
    while name:
        if name in mods:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the gpuaas modules it imports (self-imports dropped)."""
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
                continue
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.add(sub if sub in mods else base)
        graph[name] = {m for t in targets if (m := _owner(t, mods)) is not None and m != name}
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm (iterative): the components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    comps: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    return comps


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """For every module in a cyclic component, its shortest cycle (each cycle listed once)."""
    found: dict[tuple[str, ...], list[str]] = {}
    for comp in strongly_connected(graph):
        members = set(comp)
        for start in comp:
            prev: dict[str, str] = {}
            queue = deque([start])
            while queue:  # breadth first: the first way back to `start` is a shortest cycle
                v = queue.popleft()
                if v != start and start in graph[v]:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    path.reverse()
                    break
                for w in sorted(graph[v] & members):
                    if w not in prev and w != start:
                        prev[w] = v
                        queue.append(w)
            else:
                continue
            i = path.index(min(path))
            key = tuple(path[i:] + path[:i])
            found.setdefault(key, list(key) + [key[0]])
    return sorted(found.values())


def test_no_import_cycles() -> None:
    found = cycles(import_graph(module_files()))
    assert not found, "import cycles among gpuaas modules:\n" + "\n".join(
        " -> ".join(c) for c in found
    )


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_check_sees_every_kind_of_import(tmp_path: Path) -> None:
    """A cycle made by each kind of import is found; a TYPE_CHECKING import is not an edge."""
    _write(
        tmp_path,
        {
            "gpuaas/__init__.py": "",
            "gpuaas/a.py": "from gpuaas import b\n",  # from package import submodule
            "gpuaas/b.py": "def f():\n    from .c import x\n",  # relative, inside a function
            "gpuaas/c.py": "import gpuaas.a\nx = 1\n",  # plain import
            "gpuaas/p/__init__.py": "from gpuaas.p.q import y\n",  # a package's __init__
            "gpuaas/p/q.py": "from . import helpers\ny = 2\n",
            "gpuaas/p/helpers.py": "from gpuaas.p import y\n",  # a name of the __init__
            "gpuaas/t.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from gpuaas.u import z\n",
            "gpuaas/u.py": "from gpuaas.t import TYPE_CHECKING\nz = 0\n",
        },
    )
    graph = import_graph(module_files(tmp_path))
    assert graph["gpuaas.b"] == {"gpuaas.c"}
    assert graph["gpuaas.t"] == set()
    assert cycles(graph) == [
        ["gpuaas.a", "gpuaas.b", "gpuaas.c", "gpuaas.a"],
        ["gpuaas.p", "gpuaas.p.q", "gpuaas.p.helpers", "gpuaas.p"],
    ]


@pytest.mark.parametrize(
    "edges, expected",
    [
        ({"a": {"b"}, "b": set()}, []),
        ({"a": {"b"}, "b": {"a"}}, [["a", "b", "a"]]),
        ({"a": {"b", "c"}, "b": {"a"}, "c": {"a"}}, [["a", "b", "a"], ["a", "c", "a"]]),
    ],
)
def test_cycles_of_small_graphs(edges: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert cycles(edges) == expected


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """The gpuaas modules `start` imports, directly or through other gpuaas modules."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for m in graph[todo.pop()] - seen:
            seen.add(m)
            todo.append(m)
    return seen


@pytest.mark.parametrize("judge", ["gpuaas.objective", "gpuaas.validator", "gpuaas.pricing"])
def test_the_judge_imports_no_method(judge: str) -> None:
    """The objective every method is scored by, the independent validator and the prices they
    share import no heuristic, not even through another gpuaas module (issue 40): the judge
    does not depend on a contestant's internals."""
    graph = import_graph(module_files())
    found = sorted(m for m in reachable(graph, judge) if m.startswith("gpuaas.heuristics"))
    assert not found, f"{judge} imports {found}"


def test_reachable_follows_imports_through_other_modules() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert reachable(graph, "a") == {"a", "b", "c"}
    assert reachable(graph, "d") == set()
