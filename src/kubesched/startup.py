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


def freeze_survivors() -> None:
    """Leave everything alive now out of later collections (`gc.freeze`), inside `survivors_frozen`.

    For a command that makes one simulation: at its phase boundaries (loaded, admitted, populated,
    before the output) the heap holds little but the parsed objects and the cluster made of them,
    which live as long as the result. A full collection walks every one of them to free nothing: at
    100,000 nodes and 340,000 pods three took 5.4 CPU s. Frozen objects are still freed by reference
    counting; the cost is that cyclic garbage alive at a freeze waits until `survivors_frozen` ends."""
    gc.freeze()


@contextmanager
def survivors_frozen() -> Iterator[None]:
    """Where `freeze_survivors` may be called; on the way out everything frozen goes back to the oldest
    generation, so a caller that runs commands in one process (tests, a program) frees their garbage."""
    try:
        yield
    finally:
        gc.unfreeze()


def exit_without_collecting() -> None:
    """The command is done and the process ends: freeze the heap, so the interpreter's last full collection
    does not walk it and take apart its cycles one by one (2.5 CPU s at 10,000 nodes and 100,000 pods, a
    tenth of the command) for memory the system takes back at once. Garbage cycles left then are never
    finalized; the commands write and close their files themselves."""
    gc.freeze()
