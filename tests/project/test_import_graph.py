"""The package import graph of ``knowmeter``, read with ``ast`` (no module is imported).

A *unit* is ``knowmeter`` itself or one name under it: a subpackage (``knowmeter.compare``) or a
top-level module (``knowmeter.pipeline``). Imports at module level, inside functions (lazy) and
under ``if TYPE_CHECKING:`` (annotations only) count alike: a type named across a layer ties the
two layers as much as a call does. Three rules (DESIGN.md, one-directional data flow):

* no cycle between units;
* no cycle between modules (``observe._merge`` ↔ ``observe._report`` was one, inside a package);
* no import of another package's private module (a path component starting with ``_``) — a
  package's private modules are reached through its ``__init__``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


@dataclass(frozen=True)
class Edge:
    """One import statement from ``importer`` (a module) of ``target`` (a module)."""

    importer: str
    target: str
    line: int

    def __str__(self) -> str:
        path = self.importer.replace(".", "/")
        return f"{path}.py:{self.line} imports {self.target}"


def modules(src: Path = SRC) -> dict[str, Path]:
    """Every module of the package, dotted name → file (a package is its ``__init__.py``)."""
    out: dict[str, Path] = {}
    for path in sorted((src / "knowmeter").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _targets(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool, known: set[str]) -> list[str]:
    """The ``knowmeter`` modules one import statement names (``from a import b`` is ``a.b`` when b is one)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            base = importer.split(".") if is_package else importer.split(".")[:-1]
            base = base[: len(base) - node.level + 1]
            module = ".".join([*base, node.module] if node.module else base)
        else:
            module = node.module or ""
        names = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module for alias in node.names]
    out: dict[str, None] = {}
    for name in names:
        while name not in known and "." in name:
            name = name.rsplit(".", 1)[0]
        if name in known:
            out[name] = None
    return list(out)


def edges(src: Path = SRC) -> list[Edge]:
    """Every import of a ``knowmeter`` module by a ``knowmeter`` module."""
    found = modules(src)
    known = set(found)
    out: list[Edge] = []
    for name, path in found.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                out.extend(Edge(name, target, node.lineno) for target in _targets(node, name, is_package, known))
    return out


def unit(module: str) -> str:
    """``knowmeter.report.html._page`` → ``knowmeter.report``."""
    return ".".join(module.split(".")[:2])


def private_violations(found: list[Edge]) -> list[Edge]:
    """Imports of a private module (``_x``) from outside the package that holds it."""
    out = []
    for edge in found:
        parts = edge.target.split(".")
        for i, part in enumerate(parts[1:], start=1):
            if part.startswith("_"):
                owner = ".".join(parts[:i])
                if edge.importer != owner and not edge.importer.startswith(owner + "."):
                    out.append(edge)
                break
    return out


def _module(name: str) -> str:
    return name


def unit_cycles(found: list[Edge], node: Callable[[str], str] = unit) -> list[list[str]]:
    """Strongly connected groups of more than one unit (Tarjan), each sorted; ``node=_module``
    takes each module as a node of its own."""
    graph: dict[str, set[str]] = {}
    for edge in found:
        a, b = node(edge.importer), node(edge.target)
        if a != b:
            graph.setdefault(a, set()).add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(groups)


def _cycle_detail(found: list[Edge], cycles: list[list[str]], node: Callable[[str], str]) -> str:
    return "\n".join(
        str(edge)
        for group in cycles
        for edge in found
        if node(edge.importer) in group and node(edge.target) in group and node(edge.importer) != node(edge.target)
    )


@pytest.mark.slow
@pytest.mark.parametrize("node", [unit, _module], ids=["packages", "modules"])
def test_no_import_cycle_type_only_imports_included(node: Callable[[str], str]) -> None:
    found = edges()
    cycles = unit_cycles(found, node)
    assert not cycles, "import cycles:\n" + _cycle_detail(found, cycles, node)


@pytest.mark.slow
def test_no_import_of_another_packages_private_module() -> None:
    bad = private_violations(edges())
    assert not bad, "imports of another package's private module:\n" + "\n".join(map(str, bad))


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / "knowmeter" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    "statement",
    ["from knowmeter.b._impl import x", "from knowmeter.b import _impl", "import knowmeter.b._impl"],
)
def test_the_checks_see_a_private_import_and_a_cycle(tmp_path: Path, statement: str) -> None:
    src = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "",
            "a/_use.py": f"def f():\n    {statement}\n",
            "b/__init__.py": "from knowmeter.b._impl import x\n",
            "b/_impl.py": "def g():\n    from knowmeter.a import _use\nx = 1\n",
        },
    )
    found = edges(src)
    assert [str(e) for e in private_violations(found)] == [
        "knowmeter/a/_use.py:2 imports knowmeter.b._impl",
        "knowmeter/b/_impl.py:2 imports knowmeter.a._use",
    ]
    assert unit_cycles(found) == [["knowmeter.a", "knowmeter.b"]]


def test_a_type_checking_import_makes_a_cycle_as_a_runtime_one_does(tmp_path: Path) -> None:
    src = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "from knowmeter.b import x\n",
            "b/__init__.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from knowmeter.a import y\nx = 1\n"
            ),
        },
    )
    assert unit_cycles(edges(src)) == [["knowmeter.a", "knowmeter.b"]]
    (src / "knowmeter" / "b" / "__init__.py").write_text("x = 1\n")
    assert unit_cycles(edges(src)) == []


def test_a_cycle_between_two_modules_of_one_package_is_found(tmp_path: Path) -> None:
    src = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "",
            "a/_x.py": "from knowmeter.a._y import y\nx = 1\n",
            "a/_y.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from knowmeter.a._x import x\ny = 1\n",
        },
    )
    found = edges(src)
    assert unit_cycles(found) == []
    assert unit_cycles(found, _module) == [["knowmeter.a._x", "knowmeter.a._y"]]


def test_relative_imports_resolve_and_a_package_may_use_its_own_private_modules(tmp_path: Path) -> None:
    src = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "from ._x import y\nfrom . import _z\n",
            "a/_x.py": "from ..b import c\ny = 1\n",
            "a/_z.py": "",
            "b/__init__.py": "c = 1\n",
        },
    )
    found = edges(src)
    assert private_violations(found) == []
    assert {(e.importer, e.target) for e in found} == {
        ("knowmeter.a", "knowmeter.a._x"),
        ("knowmeter.a", "knowmeter.a._z"),
        ("knowmeter.a._x", "knowmeter.b"),
    }
    assert unit_cycles(found) == []
