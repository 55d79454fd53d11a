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


FULL_COLLECTION_THRESHOLD = 1000
"""The third GC threshold of a simulation and of `kubesched run`'s scheduling loop. Neither makes
much cyclic garbage (young collections take what there is), but the heap of parsed objects keeps
growing, and every full collection walked all of it: a tenth of the CPU time at 50000 pods, a fifth
of a run of topology-placed gangs on 5000 nodes, 6% of `kubesched run` binding 3000 pods it had
listed. One full collection per thousand young ones (Python's default is ten) leaves that out."""


@contextmanager
def few_full_collections() -> Iterator[None]:
    """Full collections a hundred times rarer inside; the thresholds as they were on the way out."""
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], FULL_COLLECTION_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
