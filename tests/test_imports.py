"""The package's import graph: no cycle, not even through imports inside functions.

The graph is read from the source (AST), so an import written inside a function counts like
one at the top of a module, and ``from erahbo.x import name`` counts as an import of
``erahbo.x`` (and of ``erahbo.x.name`` when that is a module); importing ``erahbo.a.b`` also
counts as importing the package ``erahbo.a``, whose ``__init__`` Python runs first.  The lazy
public surface of ``erahbo/__init__.py`` (PEP 562 ``__getattr__`` over a name table) has no
import statement and adds no edge; modules must not import the ``erahbo`` package for its lazy
names either (that would hide an edge).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "erahbo"


def module_names(root: Path) -> dict[str, Path]:
    """``erahbo.a.b`` -> its file, for every module and package of ``root``."""
    out = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Modules of the package that ``name`` imports anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        for t in targets:
            if t not in modules or t == name:
                continue
            found.add(t)
            # importing a.b.c first runs the package a.b (unless we are inside it already)
            parts = t.split(".")
            for i in range(2, len(parts)):
                parent = ".".join(parts[:i])
                if not (name == parent or name.startswith(parent + ".")):
                    found.add(parent)
    return found


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (as a path that returns to its start), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (cycle := visit(nxt)) is not None:
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)) is not None:
            return cycle
    return None


def test_find_cycle_sees_a_cycle_and_its_absence():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


@pytest.fixture(scope="module")
def package() -> tuple[dict[str, Path], dict[str, set[str]]]:
    """The package's modules and its import graph (``name`` -> :func:`imports_of`), read from
    the source once for the tests below (each reads them, none changes them)."""
    modules = module_names(SRC)
    return modules, {name: imports_of(name, path, modules) for name, path in modules.items()}


def test_the_package_has_no_import_cycle(package):
    modules, graph = package
    assert "erahbo.optimizer.core" in modules and "erahbo.runtime.journal" in modules
    assert graph["erahbo.study.run"] >= {"erahbo.optimizer.core"}  # the walk sees imports
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_optimizer_knows_no_storage(package):
    """The storage-free optimizer never imports the study package, which owns the journal and
    registers its journaled subclass with the core instead."""
    modules, graph = package
    storage = {m for m in modules if m == "erahbo.study" or m.startswith("erahbo.study.")}
    offenders = {name: sorted(graph[name] & storage) for name in modules
                 if name.startswith("erahbo.optimizer") and graph[name] & storage}
    assert not offenders, f"erahbo.optimizer imports erahbo.study: {offenders}"


def test_the_optimizer_imports_nothing_of_the_runtime_nor_the_study(package):
    """The optimizer only asks and tells: no module under ``erahbo/optimizer`` imports
    ``erahbo.runtime`` (executors, the scheduler, the journal) or ``erahbo.study``, not even
    inside a function or under ``TYPE_CHECKING`` (the AST scan sees every import statement).
    The failure rule is its own part (``erahbo.optimizer.failure``), canonical JSON is low level
    (``erahbo._json``), and running a trial's seeds is the study's
    (``erahbo.study.run_trial``)."""
    modules, graph = package
    below = {m for m in modules if m.split(".")[:2] in (["erahbo", "runtime"],
                                                        ["erahbo", "study"])}
    assert "erahbo.runtime.evaluate" in below and "erahbo.study.run" in below
    assert graph["erahbo.study.run"] >= {"erahbo.runtime.executors"}  # the scan sees them
    offenders = {name: sorted(graph[name] & below) for name in modules
                 if name.split(".")[:2] == ["erahbo", "optimizer"] and graph[name] & below}
    assert not offenders, f"erahbo.optimizer imports the runtime or the study: {offenders}"


def test_modules_do_not_import_the_lazy_package_root(package):
    """``from erahbo import X`` would go through the lazy ``__getattr__`` (a hidden edge)."""
    modules, graph = package
    offenders = sorted(
        name for name, path in modules.items()
        if name != "erahbo" and "erahbo" in graph[name]
        and _lazy_names_used(path, modules)
    )
    assert not offenders, f"import the defining module instead of the erahbo root: {offenders}"


def _lazy_names_used(path: Path, modules: dict[str, Path]) -> bool:
    """Whether a module imports one of the root's lazy names (not ``__version__``, a module)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "erahbo" and not node.level:
            if any(a.name != "__version__" and f"erahbo.{a.name}" not in modules
                   for a in node.names):
                return True
        if isinstance(node, ast.Import) and any(a.name == "erahbo" for a in node.names):
            return True
    return False
