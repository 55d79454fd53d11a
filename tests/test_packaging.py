"""What the wheel ships: the product, without its tests or the test support package (`kubesched_testing`)."""

from __future__ import annotations

import functools
import importlib.util
import re
import shutil
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st
from setuptools import Distribution

from kubesched_testing import import_contracts

ROOT = Path(__file__).resolve().parents[1]
TEST_FILE = re.compile(r"(^|/)(test_[^/]*|[^/]*_test)\.py$")
# What a build reads; the Dockerfile copies exactly these into the image's build stage.
BUILD_INPUTS = ("pyproject.toml", "setup.py", "README.md", "src")


@functools.cache
def _setup_script() -> ModuleType:
    """setup.py as a module (its setup() call runs only as a script)."""
    spec = importlib.util.spec_from_file_location("kubesched_setup_script", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _built_modules(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files build_py would put in the wheel, as pyproject.toml and setup.py configure it."""
    monkeypatch.chdir(ROOT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # setuptools' notes on its own configuration are not the subject here
        dist = Distribution({"script_name": str(ROOT / "setup.py")})
        dist.parse_config_files()
        command = _setup_script().BuildPyWithoutTests(dist)
        command.ensure_finalized()
        return [Path(filename).as_posix() for _, _, filename in command.find_all_modules()]


def test_test_modules_are_recognised_by_name() -> None:
    is_test = _setup_script().is_test_module
    assert is_test("test_fit") and is_test("util_test")
    assert not is_test("fit") and not is_test("testing") and not is_test("latest") and not is_test("contest")


@given(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,30}", fullmatch=True) | st.sampled_from(["test_", "_test", "test"]))
def test_the_wheel_and_the_import_contracts_agree_on_what_a_test_is(name: str) -> None:
    """setup.py cannot import the test support package (the image's build has no testing/), so each has the rule."""
    assert _setup_script().is_test_module(name) == import_contracts.is_test_module(name)


def test_the_build_leaves_the_tests_beside_the_code_out(monkeypatch: pytest.MonkeyPatch) -> None:
    on_disk = [p.relative_to(ROOT).as_posix() for p in (ROOT / "src").rglob("*.py")]
    assert any(TEST_FILE.search(p) for p in on_disk), "no test beside the code: this test would prove nothing"
    built = _built_modules(monkeypatch)
    assert "src/kubesched/cli.py" in built
    assert [p for p in built if TEST_FILE.search(p)] == []
    assert sorted(built) == sorted(p for p in on_disk if not TEST_FILE.search(p))


def test_the_wheel_holds_the_product_only(tmp_path: Path) -> None:
    """The real build (a few seconds), from a copy of what the build reads."""
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in BUILD_INPUTS:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, tree / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy(ROOT / name, tree / name)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"), str(tree)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0 and "matching distribution" in done.stdout + done.stderr:
        pytest.skip("pip cannot fetch the build requirements (setuptools, wheel): no package index here")
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = (tmp_path / "dist").glob("kubesched-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "kubesched/cli.py" in names and "kubesched/ui/static/index.html" in names
    assert {n.split("/")[0] for n in names} == {"kubesched", wheel.name.split("-py3")[0] + ".dist-info"}
    assert [n for n in names if TEST_FILE.search(n)] == []


def test_the_image_is_built_from_the_build_inputs_only() -> None:
    """The image installs with `pip install .`: without setup.py it would ship the tests beside the code."""
    copied: list[str] = []
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.startswith("COPY "):
            copied.extend(line.split()[1:-1])
    assert sorted(copied) == sorted(BUILD_INPUTS)
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    assert {"tests", "testing", "bench", "**/test_*.py", "**/*_test.py"} <= set(ignored)
