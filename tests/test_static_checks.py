"""The checks CI runs on the code itself: ruff, the import layers (import-linter) and mypy."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Every Python tree of the repository, the test support package and the build hook included.
LINTED = ("src", "testing", "tests", "bench", "examples", "setup.py")


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed: pip install -e '.[test]'")
    return subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
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


def test_no_tracked_file_holds_merge_conflict_markers() -> None:
    """A half-resolved merge once shipped in README.md and so in the package's long description."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    done = subprocess.run(
        ["git", "grep", "-nE", "^(<<<<<<<|>>>>>>>)( |$)"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 1, f"merge-conflict markers:\n{done.stdout}"


def _forbidden_kept(imports: list[tuple[str, str]]) -> bool:
    """ProductForbiddenContract on a small graph: package `pkg`, external `support` forbidden to it."""
    from grimp import ImportGraph
    from importlinter.configuration import configure

    from kubesched_testing.import_contracts import ProductForbiddenContract

    configure()  # the check times itself with import-linter's configured clock
    graph = ImportGraph()
    for name in ("pkg", "pkg.a", "pkg.b", "pkg.test_a", "pkg.b_test"):
        graph.add_module(name)
    graph.add_module("support", is_squashed=True)
    for importer, imported in imports:
        graph.add_import(importer=importer, imported=imported, line_number=1, line_contents=f"import {imported}")
    contract = ProductForbiddenContract(
        name="product",
        session_options={"root_packages": ["pkg"], "include_external_packages": "True"},
        contract_options={"source_modules": ["pkg"], "forbidden_modules": ["support"]},
    )
    return contract.check(graph, verbose=False).kept


def test_the_product_may_not_import_the_test_support_but_its_tests_may() -> None:
    if importlib.util.find_spec("importlinter") is None:
        pytest.skip("import-linter is not installed: pip install -e '.[test]'")
    assert _forbidden_kept([("pkg.test_a", "support"), ("pkg.b_test", "support"), ("pkg.test_a", "pkg.a")])
    assert not _forbidden_kept([("pkg.a", "support")])
    assert not _forbidden_kept([("pkg.a", "pkg.b"), ("pkg.b", "support")])
    # A test is not in the wheel: importing one from the product breaks the contract, even a test that imports
    # nothing forbidden.
    assert not _forbidden_kept([("pkg.a", "pkg.test_a")])
    assert not _forbidden_kept([("pkg.a", "pkg.b_test"), ("pkg.b_test", "support")])


def test_every_plugin_is_in_the_independence_contract() -> None:
    """A new plugin package is held independent as soon as it lands, or this names it."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (contract,) = (c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "product_independence")
    plugins = ROOT / "src" / "kubesched" / "framework" / "plugins"
    packages = {p.parent.name for p in plugins.glob("*/__init__.py")} - {"helper"}
    assert len(packages) > 20
    assert sorted(contract["modules"]) == sorted(f"kubesched.framework.plugins.{name}" for name in packages)
