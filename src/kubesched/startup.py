"""Start-up without the cyclic garbage collector.

A start builds a few hundred thousand objects (modules, classes, functions, the
plugins) that live as long as the process and leave next to no garbage, so
collections meanwhile would only walk them, again and again: a tenth of
`kubesched run`'s start. They are made with the collector off, then frozen out of
later full collections, which a long-running scheduler would otherwise pay for
every time.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def without_gc() -> Iterator[None]:
    """Collector off inside (unless it already was); on the way out what was made is frozen and it is back on."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()
