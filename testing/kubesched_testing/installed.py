"""`kubesched` started as an installed copy starts, for tests and benchmarks that time it.

`pip install` (the Docker image included) compiles every module to bytecode when it
installs them; a source tree run with PYTHONDONTWRITEBYTECODE set (as CI machines
often are) compiles them all again at each start, a third of it. Timings of starts
are only fair with the bytecode there, so it is written first, as pip would.
"""

from __future__ import annotations

import compileall
import functools
import sys
from pathlib import Path

import kubesched


@functools.cache
def compile_bytecode() -> None:
    """Write kubesched's `__pycache__` (once per process; up-to-date files are left alone)."""
    compileall.compile_dir(str(Path(kubesched.__file__).parent), quiet=2)


def kubesched_command(*args: str) -> list[str]:
    """The command line of `kubesched ARGS` run by this interpreter, through the installed entry point."""
    compile_bytecode()
    return [sys.executable, "-m", "kubesched", *args]
