"""Build hook: the tests beside the code (`test_*.py`, `*_test.py`) stay in the source tree, out of the wheel.

setuptools' package-data settings choose data files only; every module of a package found is built,
so the test modules are dropped here, where build_py lists them.
"""

from __future__ import annotations

from setuptools import setup
from setuptools.command.build_py import build_py


def is_test_module(module: str) -> bool:
    """Named as pytest collects tests (`test_x`) or as Go names test helpers (`x_test`, e.g. util_test)."""
    return module.startswith("test_") or module.endswith("_test")


class BuildPyWithoutTests(build_py):
    """build_py, less the test modules."""

    def find_package_modules(self, package: str, package_dir: str) -> list[tuple[str, str, str]]:
        """The package's modules, those of its tests left out."""
        found: list[tuple[str, str, str]] = super().find_package_modules(package, package_dir)
        return [entry for entry in found if not is_test_module(entry[1])]


if __name__ == "__main__":  # as setuptools' build backend runs it; tests import the class
    setup(cmdclass={"build_py": BuildPyWithoutTests})
