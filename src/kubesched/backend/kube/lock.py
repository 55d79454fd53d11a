"""The scheduler lock: one thread at a time touches the scheduler's state; HTTP waits happen outside it.

Upstream's scheduling goroutine and binding goroutines share the cache and queue
behind their own mutexes. Here the scheduling loop and the binding threads share
one lock, and a thread waiting on the API server lets go of it (`released`), as a
goroutine blocked on I/O lets the others run.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class SchedulerLock:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner: int | None = None

    def __enter__(self) -> SchedulerLock:
        self._lock.acquire()
        self._owner = threading.get_ident()
        return self

    def __exit__(self, *exc: object) -> None:
        self._owner = None
        self._lock.release()

    def held(self) -> bool:
        return self._owner == threading.get_ident()

    @contextmanager
    def released(self) -> Iterator[None]:
        """Let others in for the duration, if this thread holds the lock; otherwise nothing to do."""
        if not self.held():
            yield
            return
        self.__exit__()
        try:
            yield
        finally:
            self.__enter__()
