"""The checks CI runs on the code itself: ruff, the import layers (import-linter) and mypy."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed: pip install -e '.[test]'")
    return subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )


def test_ruff_lint_and_format() -> None:
    lint = _run("ruff", "check", "src", "tests", "bench", "examples")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = _run("ruff", "format", "--check", "src", "tests", "bench", "examples")
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_imports_follow_the_layers() -> None:
    """pyproject's [tool.importlinter] contracts: every module imports only from the layers below it."""
    if importlib.util.find_spec("importlinter") is None:
        pytest.skip("import-linter is not installed: pip install -e '.[test]'")
    done = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_types_check() -> None:
    """mypy with pyproject's near-strict profile over the package (tests beside the code excluded)."""
    done = _run("mypy")
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_tracked_file_holds_merge_conflict_markers() -> None:
    """A half-resolved merge once shipped in README.md and so in the package's long description."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    done = subprocess.run(
        ["git", "grep", "-nE", "^(<<<<<<<|>>>>>>>)( |$)"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 1, f"merge-conflict markers:\n{done.stdout}"


def _module_files(src: Path) -> dict[str, Path]:
    """Every module under `src`, by dotted name (a package by its own name)."""
    out: dict[str, Path] = {}
    for f in sorted(src.rglob("*.py")):
        parts = list(f.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = f
    return out


def _imported(module: str, path: Path, modules: Mapping[str, Path]) -> set[str]:
    """The modules `module` imports anywhere in its text: at the top, in functions, under TYPE_CHECKING.

    `from package import name` reads the package, so it counts for the package's __init__ as well as
    for the submodule `name` when there is one: that is how a package re-exporting its modules and a
    module importing its siblings through it end up in a circle.
    """
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                while name and name not in modules:
                    name = name.rpartition(".")[0]
                if name:
                    out.add(name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                base = ".".join([*package[: len(package) - node.level + 1], *([base] if base else [])])
            if base in modules:
                out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules)
    out.discard(module)
    return out


def import_cycles(src: Path) -> list[list[str]]:
    """One cycle (first module repeated at the end) per strongly connected group of modules (Tarjan)."""
    modules = _module_files(src)
    graph = {m: sorted(_imported(m, f, modules)) for m, f in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group: set[str] = set()
            while not group or v not in group:
                group.add(stack.pop())
            if len(group) > 1:
                groups.append(group)

    for m in sorted(graph):
        if m not in index:
            visit(m)
    return [_cycle_in(sorted(group)[0], group, graph) for group in groups]


def _cycle_in(start: str, group: set[str], graph: Mapping[str, list[str]]) -> list[str]:
    """The shortest way from `start` back to itself inside `group` (breadth first)."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for v in frontier:
            for w in graph[v]:
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if w in group and w not in came_from:
                    came_from[w] = v
                    following.append(w)
        frontier = following
    raise AssertionError(f"{start} is in no cycle")


def test_no_import_cycles_in_kubesched() -> None:
    """No circle among kubesched's modules, counting function-level and TYPE_CHECKING imports too: the layers
    contracts see only some of them, and a circle is where partial initialisation bites."""
    cycles = import_cycles(ROOT / "src")
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_cycle_finder_sees_lazy_type_checking_and_package_circles(tmp_path: Path) -> None:
    """The finder itself: each kind of circle the package has had, and a clean package passes."""
    files = {
        "pkg/__init__.py": "",
        "pkg/a.py": "def f():\n    from pkg import b\n",
        "pkg/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.c import C\n",
        "pkg/c.py": "from . import a\n",
        "pkg/sub/__init__.py": "from pkg.sub.mod import X\n",
        "pkg/sub/mod.py": "from pkg.sub import sibling\nX = 1\n",
        "pkg/sub/sibling.py": "import pkg.sub.other\n",
        "pkg/sub/other.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert sorted(import_cycles(tmp_path)) == [
        ["pkg.a", "pkg.b", "pkg.c", "pkg.a"],
        ["pkg.sub", "pkg.sub.mod", "pkg.sub"],
    ]
    (tmp_path / "pkg/c.py").write_text("")
    (tmp_path / "pkg/sub/mod.py").write_text("from pkg.sub.sibling import Y\n")
    assert import_cycles(tmp_path) == []
