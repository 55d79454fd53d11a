"""The checks CI runs on the code itself: ruff, the import layers (import-linter) and mypy."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Every Python tree of the repository, the test support package and the build hook included.
LINTED = ("src", "testing", "tests", "bench", "examples", "setup.py")


def _run(module: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed: pip install -e '.[test]'")
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, **(env or {})},
    )


def test_ruff_lint_and_format() -> None:
    lint = _run("ruff", "check", *LINTED)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = _run("ruff", "format", "--check", *LINTED)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_imports_follow_the_layers() -> None:
    """pyproject's [tool.importlinter] contracts: the layers, the product apart from its test support, the plugins."""
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


def test_tests_and_benchmarks_type_check() -> None:
    """mypy over the tests (beside the code too), the benchmarks and the example plugin's tests.

    The same profile, except that test functions need no annotations (pytest calls them; their parameters are
    fixtures and table rows) while their bodies are still checked. bench/ is on the path: its scripts import
    each other by name, as `python bench/x.py` runs them."""
    files = sorted(
        str(p.relative_to(ROOT)) for tree in ("tests", "bench", "examples") for p in (ROOT / tree).rglob("*.py")
    ) + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "src").rglob("test_*.py"))
    done = _run(
        "mypy",
        "--allow-untyped-defs",
        "--allow-incomplete-defs",
        "--allow-untyped-decorators",
        "--check-untyped-defs",
        "--explicit-package-bases",
        *files,
        env={"MYPYPATH": "bench"},
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_tracked_file_holds_merge_conflict_markers() -> None:
    """A half-resolved merge once shipped in README.md and so in the package's long description."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    done = subprocess.run(
        ["git", "grep", "-nE", "^(<<<<<<<|>>>>>>>)( |$)"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 1, f"merge-conflict markers:\n{done.stdout}"
